export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Polls until `check` answers a truthy value, and answers it; fails after `timeoutMs`. For work done
 * by workers or another process: a test waits for the outcome, never for a fixed time.
 */
export async function eventually<T>(check: () => Promise<T | undefined | null | false>, timeoutMs = 15_000, stepMs = 50): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(stepMs);
  }
}

/**
 * Waits until the service has no work in flight after an answer (`s.background`: the portal's
 * sign-in links), the service's own drain signal: what that work did, or did not do, is then final.
 */
export async function settled(t: { s: { background: Set<Promise<void>> } }): Promise<void> {
  while (t.s.background.size) await Promise.allSettled([...t.s.background]);
}
