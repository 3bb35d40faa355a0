import type { Db } from '../db/sql.ts';

export type PassOutcome = 'success' | 'failure' | 'timeout';

/** One row of repair_pass_status: what a repair pass did last, in whichever process ran it. */
export interface PassStatus {
  pass: string;
  last_started_at: Date;
  last_finished_at: Date;
  last_outcome: PassOutcome;
  last_success_at: Date | null;
  last_failure_at: Date | null;
  last_error: string | null;
  last_duration_ms: number;
  last_repaired: number | null;
  consecutive_failures: number;
}

export interface PassRun {
  pass: string;
  outcome: PassOutcome;
  startedAt: Date;
  durationMs: number;
  /** Rows repaired (a success); null otherwise. */
  repaired: number | null;
  /** The error's message (a failure or a timeout); null for a success. */
  error: string | null;
}

const ERROR_CHARS = 500;

/** Records one run of a pass: its outcome, and for a success the time, for a failure the count since the last success. */
export async function recordPassRun(db: Db, r: PassRun): Promise<void> {
  const ok = r.outcome === 'success';
  const error = r.error === null ? null : r.error.slice(0, ERROR_CHARS);
  await db`
    insert into repair_pass_status as p (pass, last_started_at, last_finished_at, last_outcome, last_success_at, last_failure_at,
                                         last_error, last_duration_ms, last_repaired, consecutive_failures)
    values (${r.pass}, ${r.startedAt}, now(), ${r.outcome}, ${ok ? db`now()` : null}, ${ok ? null : db`now()`},
            ${error}, ${Math.round(r.durationMs)}, ${r.repaired}, ${ok ? 0 : 1})
    on conflict (pass) do update set
      last_started_at = excluded.last_started_at,
      last_finished_at = excluded.last_finished_at,
      last_outcome = excluded.last_outcome,
      last_success_at = coalesce(excluded.last_success_at, p.last_success_at),
      last_failure_at = coalesce(excluded.last_failure_at, p.last_failure_at),
      last_error = coalesce(excluded.last_error, p.last_error),
      last_duration_ms = excluded.last_duration_ms,
      last_repaired = excluded.last_repaired,
      consecutive_failures = case when excluded.last_outcome = 'success' then 0 else p.consecutive_failures + 1 end`;
}

export async function passStatuses(db: Db): Promise<PassStatus[]> {
  return db<PassStatus[]>`select * from repair_pass_status order by pass`;
}

const unix = (d: Date | null) => (d ? Math.floor(d.getTime() / 1000) : null);

/**
 * The `repair` section of /readyz: each pass's last success and outcome, and whether it is stale
 * (no success for `staleAfterMs`). For operators only: it never makes the process unready (a
 * processor outage failing the dispute pass must not take the web processes out of a load balancer),
 * and it shows no error text (the probe needs no key; the errors are in the log and the table).
 */
export async function repairSection(db: Db, staleAfterMs: number, now = Date.now()) {
  const rows = await passStatuses(db);
  return {
    stale_after_seconds: Math.round(staleAfterMs / 1000),
    passes: Object.fromEntries(
      rows.map((r) => [
        r.pass,
        {
          last_success: unix(r.last_success_at),
          last_run: unix(r.last_finished_at),
          last_outcome: r.last_outcome,
          consecutive_failures: r.consecutive_failures,
          stale: !r.last_success_at || now - r.last_success_at.getTime() > staleAfterMs,
        },
      ]),
    ),
  };
}

/** A pass is stale without a success for this long: 15 minutes (the RepairPassNotSucceeding alert), or 3 rounds if they are longer. */
export const staleAfterMs = (reconcileIntervalMs: number): number => Math.max(15 * 60_000, 3 * reconcileIntervalMs);
