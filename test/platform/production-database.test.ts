import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { dbUrl, dropRedisPrefix, freePort, runScript as run } from '../helpers/process.ts';
import { eventually } from '../helpers/wait.ts';

// Issue 22, point 6: in production a missing database is never invented. The web and worker
// processes (and npm start, and the commands other than migrate) refuse it with one line; only the
// release step, `npm run migrate`, creates it, and says so. Outside production a start still makes it.

const admin = postgres(dbUrl('postgres'), { max: 1, onnotice: () => {} });
const made: string[] = [];
const prefix = `t_prod_${randomBytes(4).toString('hex')}`;

function envFor(db: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  made.push(db);
  return { PATH: process.env.PATH, DATABASE_URL: dbUrl(db), REDIS_URL: inject('redisUrl'), REDIS_PREFIX: prefix, LOG_LEVEL: 'warn', ...extra };
}

const exists = async (db: string) => (await admin`select 1 from pg_database where datname = ${db}`).length === 1;

afterAll(async () => {
  for (const db of made) await admin`drop database if exists ${admin(db)} with (force)`;
  await admin.end();
  await dropRedisPrefix(prefix);
});

describe('a missing database in production', () => {
  it('when web, worker, npm start or keys:create start in production on a database that does not exist, then each exits 1 with one line naming npm run migrate, and no database is created', async () => {
    const db = `t_missing_${randomBytes(4).toString('hex')}`;
    const env = envFor(db, { NODE_ENV: 'production' });
    for (const [script, args] of [['src/web.ts', []], ['src/worker.ts', []], ['src/main.ts', []], ['scripts/create-key.ts', ['--mode', 'test']]] as const) {
      const r = await run(script, [...args], { ...env, PORT: String(await freePort()) }).done;
      expect(r.code, `${script}: ${r.stderr}`).toBe(1);
      const lines = r.stderr.trim().split('\n');
      expect(lines, script).toHaveLength(1);
      expect(lines[0], script).toBe(
        `error: the database "${db}" does not exist at 127.0.0.1:${new URL(inject('databaseUrl')).port || 5432}: in production only the release step creates it (\`npm run migrate\`, the Procfile's release); run it, or correct DATABASE_URL if the name is wrong.`,
      );
      expect(r.stdout, script).toBe('');
    }
    expect(await exists(db)).toBe(false);
  });

  it('when npm run migrate runs in production on a database that does not exist, then it creates it, says so, applies the migrations, and the web process then starts', async () => {
    const db = `t_release_${randomBytes(4).toString('hex')}`;
    const env = envFor(db, { NODE_ENV: 'production' });
    const r = await run('scripts/migrate.ts', [], env).done;
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stderr.trim().split('\n');
    expect(lines[0]).toBe(`created the database "${db}" on 127.0.0.1:${new URL(inject('databaseUrl')).port || 5432}`);
    expect(lines[1]).toMatch(/^applied: 0001_foundation\.sql, /);
    expect(await exists(db)).toBe(true);

    const again = await run('scripts/migrate.ts', [], env).done;
    expect(again.stderr).toBe('database is up to date\n');

    const port = await freePort();
    const web = run('src/web.ts', [], { ...env, PORT: String(port) });
    try {
      const health = await eventually(async () => {
        if (web.child.exitCode !== null) throw new Error(`the web process exited: ${web.out()}`);
        return (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.ok;
      }, 20_000);
      expect(health).toBe(true);
    } finally {
      web.child.kill('SIGTERM');
      await web.done;
    }
  });

  it('when the web process starts outside production on a database that does not exist, then it still creates it (a laptop convenience)', async () => {
    const db = `t_dev_${randomBytes(4).toString('hex')}`;
    // The worker would migrate nothing: the web process refuses pending migrations after creating it.
    const r = await run('src/web.ts', [], { ...envFor(db), PORT: String(await freePort()) }).done;
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: the database schema is behind \(0001_foundation\.sql, .* pending\): run `npm run migrate` first\.\n$/);
    expect(await exists(db)).toBe(true);
  });
});
