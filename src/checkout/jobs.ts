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
 * Batches in flight at once when many sessions are due together: each takes its own rows (SKIP
 * LOCKED), so Postgres spreads a burst over its cores; at most this many pool connections.
 */
export const SWEEP_PARALLEL = 4;
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

  /** Expires what is due; answers how long to sleep. */
  async function sweepOnce(): Promise<number> {
    // Everything due now, batch after batch: a burst of 100,000 in one window is expired as fast
    // as Postgres takes the batches. One batch first; only a full one calls for parallel drains.
    const drain = async () => {
      while ((await expireDueBatch(s, log, null, SWEEP_BATCH)).length === SWEEP_BATCH);
    };
    const first = (await expireDueBatch(s, log, null, SWEEP_BATCH)).length;
    if (first === SWEEP_BATCH) await Promise.all(Array.from({ length: SWEEP_PARALLEL }, drain));
    const ms = await msToNextExpiry(s.sql);
    if (ms === null) return POLL_MS;
    // Still due after a sweep: rows another sweeper or a payment held (SKIP LOCKED); look again soon,
    // without spinning on a row that stays locked. +2 ms: a timer may fire a little early.
    if (ms <= 0) return first > 0 ? 0 : HELD_RETRY_MS;
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
      if (!stopped) await sleep(wait);
    }
  })();

  return {
    wake: () => wakeUp?.(),
    async stop() {
      stopped = true;
      wakeUp?.();
      await loop;
    },
  };
}
