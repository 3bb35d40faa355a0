import { describe, expect, it } from 'vitest';
import { MAX_DELAY_MS, slowdownMs } from '../../src/dashboard/throttle.ts';

describe('slowdownMs', () => {
  it('when an email has fewer wrong passwords than the bound, or the bound is off, then no wait', () => {
    expect(slowdownMs(0, 20)).toBe(0);
    expect(slowdownMs(19, 20)).toBe(0);
    expect(slowdownMs(500, 0)).toBe(0);
  });

  it('when it is at the bound and past it, then 1 s doubling with each failure, never more than the cap', () => {
    expect([20, 21, 22, 23, 24, 25].map((n) => slowdownMs(n, 20))).toEqual([1000, 2000, 4000, 8000, MAX_DELAY_MS, MAX_DELAY_MS]);
    expect(slowdownMs(1e9, 20)).toBe(MAX_DELAY_MS);
  });
});
