export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Polls until `check` answers a truthy value, and answers it; fails after `timeoutMs`. For work done
 * by workers or another process: a test waits for the outcome, never for a fixed time.
 */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = 10_000, stepMs = 50): Promise<NonNullable<T>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(stepMs);
  }
}
