import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ENQUEUE_WAIT_MS, within } from '../../src/queue/bound.ts';

// The request path's bound on Redis (src/queue/bound.ts), on a fake clock: what is tested is the
// timer's logic, not a real wait.

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('within', () => {
  it('when the work has not settled one millisecond before the bound, then the caller still waits; at the bound it is refused, naming what it waited on', async () => {
    const settled = vi.fn();
    const answer = within(new Promise(() => {}), ENQUEUE_WAIT_MS, 'Redis').then(settled, settled);
    await vi.advanceTimersByTimeAsync(ENQUEUE_WAIT_MS - 1);
    expect(settled).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    await answer;
    expect(settled).toHaveBeenCalledWith(new Error(`still waiting on Redis after ${ENQUEUE_WAIT_MS} ms`));
  });

  it('when the work answers before the bound, then its answer is the caller\'s and no timer is left behind', async () => {
    let resolve!: (v: string) => void;
    const answer = within(new Promise<string>((r) => (resolve = r)), 2000, 'Postgres');
    await vi.advanceTimersByTimeAsync(1999);
    resolve('done');
    await expect(answer).resolves.toBe('done');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('when the work fails after the caller stopped waiting, then nothing is unhandled: the caller saw the bound only', async () => {
    let reject!: (e: Error) => void;
    const answer = within(new Promise<never>((_, j) => (reject = j)), 100, 'Redis');
    const refused = expect(answer).rejects.toThrow('still waiting on Redis after 100 ms');
    await vi.advanceTimersByTimeAsync(100);
    await refused;
    reject(new Error('late failure'));
    await vi.advanceTimersByTimeAsync(0);
    expect(vi.getTimerCount()).toBe(0);
  });
});
