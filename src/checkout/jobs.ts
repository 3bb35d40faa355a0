import type { Logger } from 'pino';
import type { Services } from '../services.ts';
import { expireDueBatch } from './expiry.ts';
import { msToNextExpiry } from './store.ts';

// Session expiry (DESIGN 6, issue 28): no job per session. Postgres holds the schedule: the OPEN
// sessions' expires_at, indexed (checkout_sessions_open_expiry, partial on status = 'OPEN'). A
// sweeper in every worker process expires what is due and then sleeps until the next expires_at,
// read from that index, or for at most POLL_MS, so that a session created meanwhile with an
// earlier expires_at is seen in time. Creating a session therefore costs no Redis round trip, a
// pending session no Redis memory, and a Redis flush loses no expiry. The rules that expire a
// session are in expiry.ts; the worker that runs the sweeper is workers/session-expiry.ts.

/** The longest the sweeper sleeps without looking at the index again. */
export const POLL_MS = 500;
/**
 * Sessions expired per transaction (each with its event, one insert for all). 1,000 rather than
 * 500: 14 to 22 % less CPU per session in two interleaved runs of `npm run bench -- expiry` (issue
 * 28.4). A batch locks only sessions already due, so no payer of a payable session waits for one.
 */
export const SWEEP_BATCH = 1000;
/**
 * Drains at once while a burst is due: each batch takes its own rows (SKIP LOCKED), so Postgres
 * spreads a burst over its cores and one batch's JavaScript overlaps another's SQL; at most this
 * many pool connections.
 */
export const SWEEP_PARALLEL = 4;
/**
 * A batch of at least this many sessions means a burst: the other drains join. Not only after a
 * full batch (issue 28.4, second round): at 10,000 sessions a second one drain cannot keep up even
 * with small batches, so waiting for a full batch let the backlog grow to a second's worth first.
 * Below it (a trickle) the helpers would mostly find nothing: one drain is enough.
 */
export const SWEEP_HELP_AT = 50;
/** A due session that a sweep could not take (locked meanwhile): the next look. */
const HELD_RETRY_MS = 50;
/** After a failed sweep (Postgres away), the next try. */
const RETRY_MS = 1000;

export interface ExpirySweeper {
  /** Wakes the sweeper now (tests, a session created with a near expires_at). */
  wake(): void;
  stop(): Promise<void>;
}

/**
 * Starts the sweep loop. Never before expires_at by the database's clock (the one expired_at is
 * written with), and at most a scheduling delay after it when the sweeper is idle. Several worker
 * processes may sweep at once: the batch query skips rows another one has locked.
 */
export function startExpirySweeper(s: Services, log: Logger = s.log.child({ sweeper: 'session-expiry' })): ExpirySweeper {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let wakeUp: (() => void) | undefined;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      wakeUp = resolve;
      timer = setTimeout(resolve, ms);
    }).finally(() => {
      clearTimeout(timer);
      wakeUp = undefined;
    });
  let failing = false;
  // The helper drains running now (at most SWEEP_PARALLEL - 1 besides the loop below).
  const helpers = new Set<Promise<void>>();

  /** Starts the helper drains not already running: each expires batches while it finds any due. */
  function help(): void {
    while (!stopped && helpers.size < SWEEP_PARALLEL - 1) {
      const drain: Promise<void> = (async () => {
        try {
          // On while its batches are a burst's; a smaller one means the backlog is gone (the loop goes on).
          while (!stopped && (await expireDueBatch(s, log, null, SWEEP_BATCH)).length >= SWEEP_HELP_AT);
        } catch (err) {
          // The loop's own next batch meets the same fault and reports it; a helper just stops.
          log.debug({ err }, 'session expiry helper drain failed');
        }
      })().finally(() => helpers.delete(drain));
      helpers.add(drain);
    }
  }

  /** Expires what is due; answers how long to sleep. */
  async function sweepOnce(): Promise<number> {
    const n = (await expireDueBatch(s, log, null, SWEEP_BATCH)).length;
    if (n >= SWEEP_HELP_AT) help();
    // Something was due: more is likely due by now (a burst), so the next batch at once, without
    // first asking the index when (that query cost a round trip per batch).
    if (n > 0) return 0;
    const ms = await msToNextExpiry(s.sql);
    if (ms === null) return POLL_MS;
    // Still due after an empty sweep: rows another sweeper or a payment held (SKIP LOCKED); look
    // again soon, without spinning on a row that stays locked. +2 ms: a timer may fire a little early.
    if (ms <= 0) return HELD_RETRY_MS;
    return Math.min(POLL_MS, ms + 2);
  }

  const loop = (async () => {
    while (!stopped) {
      let wait: number;
      try {
        wait = await sweepOnce();
        if (failing) log.info('session expiry sweeps work again');
        failing = false;
      } catch (err) {
        if (!failing) log.warn({ err }, 'session expiry sweep failed; retrying every second');
        failing = true;
        wait = RETRY_MS;
      }
      if (!stopped && wait > 0) await sleep(wait);
    }
  })();

  return {
    wake: () => wakeUp?.(),
    async stop() {
      stopped = true;
      wakeUp?.();
      // Each drain finishes the batch it is in (one transaction) and takes no other.
      await Promise.all([loop, ...helpers]);
    },
  };
}
