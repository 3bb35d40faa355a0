import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { dbUrl, freePort, runScript, dropRedisPrefix } from '../helpers/process.ts';
import { eventually } from '../helpers/wait.ts';

const dbName = `t_cluster_${randomBytes(4).toString('hex')}`;
const admin = postgres(dbUrl('postgres'), { max: 1, onnotice: () => {} });

afterAll(async () => {
  await admin`drop database if exists ${admin(dbName)} with (force)`;
  await admin.end();
  await dropRedisPrefix(dbName);
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('WEB_CONCURRENCY', () => {
  it('when it is 2, then two web processes share the port, and SIGTERM to the primary stops them all with exit code 0', async () => {
    const port = await freePort();
    const env = {
      PATH: process.env.PATH,
      DATABASE_URL: dbUrl(dbName),
      REDIS_URL: inject('redisUrl'),
      REDIS_PREFIX: dbName,
      LOG_LEVEL: 'info',
      PORT: String(port),
      WEB_CONCURRENCY: '2',
    };
    const svc = runScript('src/main.ts', [], env);
    try {
      const lines = () => svc.out().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
      const webPids = () => new Set(lines().filter((l) => l.msg === 'listening').map((l) => l.pid as number));
      for (let i = 0; i < 200 && webPids().size < 2; i++) {
        expect(svc.child.exitCode).toBeNull();
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(webPids().size).toBe(2);
      expect(webPids().has(svc.child.pid!)).toBe(false);

      const key = runScript('scripts/create-key.ts', ['--mode', 'test'], env);
      expect((await key.done).code).toBe(0);
      const auth = { authorization: `Bearer ${key.out().trim()}` };
      // Fresh connections, so that the primary hands them to both web processes.
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => fetch(`http://127.0.0.1:${port}/v1/account`, { headers: { ...auth, connection: 'close' } })),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
      // Access lines are written asynchronously: wait for all 20, then see who served them.
      const accessLines = () => lines().filter((l) => l.msg === 'request' && l.status === 200);
      await eventually(async () => accessLines().length >= 20);
      expect(new Set(accessLines().map((l) => l.pid))).toEqual(webPids());

      const pids = [...webPids()];
      svc.child.kill('SIGTERM');
      expect((await svc.done).code).toBe(0);
      expect(pids.filter(alive)).toEqual([]);
    } finally {
      if (svc.child.exitCode === null) svc.child.kill('SIGKILL');
    }
  });
});
