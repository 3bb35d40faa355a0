/**
 * How long a request waits for an enqueue before it answers anyway. The work is already promised
 * by a committed Postgres row, and the reconciler enqueues whatever did not make it to Redis.
 */
export const ENQUEUE_WAIT_MS = 250;

/**
 * `work`, or a rejection once `ms` have passed. The work itself carries on (a late failure is
 * handled here, never unhandled); only the caller stops waiting for it. `what` is waited on (the
 * error says so).
 */
export function within<T>(work: Promise<T>, ms = ENQUEUE_WAIT_MS, what = 'Redis'): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still waiting on ${what} after ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
