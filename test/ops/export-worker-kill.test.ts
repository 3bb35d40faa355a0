import { spawn, type ChildProcess } from 'node:child_process';
import { parse } from 'csv-parse/sync';
import { afterAll, describe, expect, it } from 'vitest';
import { startWorkers, type RunningWorkers } from '../../workers/index.ts';
import { exportsWorker } from '../../workers/exports.ts';
import { root } from '../helpers/process.ts';
import { useTestServer } from '../helpers/server.ts';
import { eventually } from '../helpers/wait.ts';

// Issue 27, point 2: a worker process killed (SIGKILL) in the middle of an export run. Its job's
// lock expires (WORKER_LOCK_MS, short here), BullMQ's stall check hands the job to another worker,
// and the new attempt writes the whole file again: one whole file, of one attempt.
const LOCK_MS = 2000;
const t = useTestServer({ env: { WORKER_LOCK_MS: String(LOCK_MS) } });
const N = 60_000;
let child: ChildProcess | undefined;
let workers: RunningWorkers | undefined;

afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await workers?.close();
});

describe('an export run whose worker is killed', () => {
  it('when the worker process is killed mid-file, then another worker runs the job again and one whole file is written', async () => {
    const a = await t.account();
    await t.sql.begin(async (tx) => {
      await tx`set local statement_timeout = 0`;
      await tx`
        insert into payments (id, account_id, livemode, status, amount_cents, currency, email, billing_name, created_at)
        select 'pay_kill' || lpad(i::text, 9, '0'), ${a.accountId}, false, 'SUCCEEDED', 1 + i % 9999, 'eur', 'payer' || i || '@example.com',
          case when i % 1000 = 1 then '=1+' || i else 'Payer ' || i end, now()
        from generate_series(1, ${N}) i`;
    });
    // A worker process of its own, on the test's database and Redis prefix.
    const c = t.s.config;
    child = spawn(process.execPath, ['src/worker.ts'], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: c.databaseUrl, REDIS_URL: c.redisUrl, REDIS_PREFIX: c.redisPrefix, WORKER_LOCK_MS: String(LOCK_MS), LOG_LEVEL: 'silent' },
      stdio: 'ignore',
    });
    const made = await t.request('POST', '/v1/exports/payments/runs', { key: a.test, body: {} });
    expect(made.status).toBe(200);
    const id = made.body.id as string;
    // Killed once its first chunks are stored.
    await eventually(async () => {
      const [r] = await t.sql<{ n: number }[]>`select count(*)::int as n from export_chunks where export_run_id = ${id}`;
      return r!.n >= 2;
    }, 60_000, 50);
    child.kill('SIGKILL');
    const [killed] = await t.sql<{ status: string; attempts: number; run_token: string }[]>`select status, attempts, run_token from export_runs where id = ${id}`;
    expect(killed).toMatchObject({ status: 'RUNNING', attempts: 1 });

    workers = await startWorkers(t.s, [exportsWorker]);
    const done = await eventually(async () => {
      const res = await t.request('GET', `/v1/exports/payments/runs/${id}`, { key: a.test });
      return res.body.status === 'SUCCEEDED' ? res.body : null;
    }, 90_000, 200);
    expect(done.row_count).toBe(N);
    const [row] = await t.sql<{ attempts: number; run_token: string }[]>`select attempts, run_token from export_runs where id = ${id}`;
    expect(row!.attempts).toBe(2);
    expect(row!.run_token).not.toBe(killed!.run_token);
    const tokens = await t.sql<{ run_token: string }[]>`select distinct run_token from export_chunks where export_run_id = ${id}`;
    expect(tokens).toEqual([{ run_token: row!.run_token }]);
    const text = await (await fetch(done.url)).text();
    const rows = parse(text, { columns: true }) as Array<Record<string, string>>;
    expect(rows).toHaveLength(N);
    expect(rows[0]!.billing_name).toBe("'=1+1");
    expect(new Set(rows.map((r) => r.id)).size).toBe(N);
  }, 180_000);
});
