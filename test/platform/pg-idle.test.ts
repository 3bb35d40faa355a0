import { spawnSync } from 'node:child_process';
import path from 'node:path';
import postgres from 'postgres';
import { describe, expect, inject, it } from 'vitest';

// patches/postgres+3.4.9.patch, idleTimerOf: a connection of the pool is closed once it has been
// idle for idle_timeout, as before; its timer is armed once and looks at the last use when it
// fires, instead of being cleared and set again each time the connection goes busy and idle.
// The server's own database: these tests make no tables.
const server = new URL(inject('databaseUrl'));
server.pathname = '/postgres';
const url = server.toString();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the pool's idle timeout (patched)", () => {
  it('when a connection is used again before its idle time is up, then it closes that long after its last use, not its first', async () => {
    // connect() sets idle_timeout 60 s; a pool of its own with 1 s, the pool's other settings as postgres.js's.
    const sql = postgres(url, { max: 1, idle_timeout: 1, onnotice: () => {} });
    const open = () => (sql as unknown as { stats(): { open: number } }).stats().open;
    try {
      await sql`select 1`;
      const firstUse = performance.now();
      await sleep(600);
      await sql`select 1`;
      const lastUse = performance.now();
      await sleep(Math.max(0, 1300 - (performance.now() - firstUse)));
      // 1.3 s after the first use, 0.7 s after the last: still open (it would be closed by a timer of the first use).
      expect(open()).toBe(1);
      const deadline = performance.now() + 5_000;
      while (open() > 0 && performance.now() < deadline) await sleep(20);
      expect(open()).toBe(0);
      // Closed no sooner than its idle time after the last use.
      expect(performance.now() - lastUse).toBeGreaterThanOrEqual(990);
      // And the pool opens a connection again when asked.
      expect((await sql`select 2 as n`)[0]!.n).toBe(2);
    } finally {
      await sql.end({ timeout: 1 });
    }
  });

  it('when a process has used the pool and ended it, then it exits at once: no idle timer keeps it alive', () => {
    // The service's pool (idle_timeout 60 s). A timer left armed by a busy connection would hold the process a minute.
    const script = `
      import { connect } from ${JSON.stringify(path.resolve('src/db/sql.ts'))};
      const sql = connect(${JSON.stringify(url)}, 4);
      for (let i = 0; i < 20; i++) await Promise.all(Array.from({ length: 10 }, () => sql\`select 1\`));
      await sql.end({ timeout: 5 });
      console.log('ended');`;
    const started = performance.now();
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
    expect({ status: run.status, stdout: run.stdout.trim(), stderr: run.stderr }).toEqual({ status: 0, stdout: 'ended', stderr: '' });
    expect(performance.now() - started).toBeLessThan(20_000);
  });
});
