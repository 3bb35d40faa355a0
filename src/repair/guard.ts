import { within } from '../queue/bound.ts';
import type { Services } from '../services.ts';
import { recordPassRun, type PassOutcome } from './status.ts';

/** A repair pass as the guard runs it (workers/types.ts, Reconciler). */
export interface GuardedPass {
  name: string;
  run(s: Services): Promise<number>;
}

/** What a round reports for each pass: rows repaired, or why it has none. */
export type PassResult = number | 'failed' | 'timed out' | 'skipped (still running)';

/** How long the round waits for the status row of a pass to be written (Postgres may be the trouble). */
const RECORD_WAIT_MS = 2000;

/** The passes of each process still running past their timeout (Services: one per process, one per test server). */
const runningBy = new WeakMap<Services, Set<string>>();

const TIMED_OUT = Symbol('timed out');

/**
 * One round of repair passes, in order, each in its own guard (docs/operations.md, "Repair
 * passes"): a pass that throws is logged, counted and recorded, and the next one runs; a pass that
 * has not ended after REPAIR_PASS_TIMEOUT_MS is recorded as timed out and the round goes on without
 * it. Its work is not cancelled (a pass may be between a processor call and its record): it goes
 * on in the background, bounded by the pool's statement timeout and the processor's own timeouts,
 * and this process does not start it again until it has ended. Never throws.
 */
export async function runRepairRound(s: Services, passes: readonly GuardedPass[]): Promise<Record<string, PassResult>> {
  const results: Record<string, PassResult> = {};
  for (const pass of passes) results[pass.name] = await runGuarded(s, pass);
  return results;
}

async function runGuarded(s: Services, pass: GuardedPass): Promise<PassResult> {
  const running = runningBy.get(s) ?? new Set<string>();
  runningBy.set(s, running);
  const m = s.metrics;
  const labels = { pass: pass.name };
  const log = s.log.child({ repairPass: pass.name });
  if (running.has(pass.name)) {
    m.repairSkipped.inc(labels);
    log.warn('repair pass not started: its previous run, past its timeout, is still going');
    return 'skipped (still running)';
  }

  m.repairRuns.inc(labels);
  running.add(pass.name);
  const startedAt = new Date();
  const t0 = performance.now();
  const elapsed = () => performance.now() - t0;
  // A pass that throws before its first await rejects here too.
  const work = Promise.resolve().then(() => pass.run(s));
  void work
    .finally(() => {
      running.delete(pass.name);
      m.repairDuration.observe(labels, elapsed() / 1000);
    })
    .catch(() => {});

  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), s.config.repairPassTimeoutMs);
  });
  const record = (outcome: PassOutcome, repaired: number | null, error: string | null) =>
    within(recordPassRun(s.sql, { pass: pass.name, outcome, startedAt, durationMs: elapsed(), repaired, error }), RECORD_WAIT_MS, 'Postgres').catch((err: unknown) =>
      log.warn({ err: (err as Error).message }, 'could not record the outcome of a repair pass'),
    );
  try {
    const answer = await Promise.race([work, timeout]);
    if (answer === TIMED_OUT) {
      m.repairFailures.inc({ ...labels, reason: 'timeout' });
      const ms = s.config.repairPassTimeoutMs;
      log.error({ timeoutMs: ms }, 'repair pass timed out: the round goes on without it');
      void work.then(
        (repaired) => log.warn({ repaired, ms: Math.round(elapsed()) }, 'repair pass timed out earlier has ended'),
        (err: unknown) => log.error({ err, ms: Math.round(elapsed()) }, 'repair pass timed out earlier has failed'),
      );
      await record('timeout', null, `did not end within REPAIR_PASS_TIMEOUT_MS (${ms} ms)`);
      return 'timed out';
    }
    m.repairRepaired.inc(labels, answer);
    await record('success', answer, null);
    return answer;
  } catch (err) {
    m.repairFailures.inc({ ...labels, reason: 'error' });
    log.error({ err }, 'repair pass failed: the next one runs');
    await record('failure', null, err instanceof Error ? err.message : String(err));
    return 'failed';
  } finally {
    clearTimeout(timer);
  }
}
