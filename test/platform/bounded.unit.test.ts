import { describe, expect, it } from 'vitest';
import { setBounded } from '../../src/lib/bounded.ts';

describe('setBounded', () => {
  it('when the cache is full, then the oldest entry goes before the new one is set', () => {
    const m = new Map<string, number>();
    for (const [i, k] of ['a', 'b', 'c', 'd'].entries()) setBounded(m, 3, k, i);
    expect([...m]).toEqual([['b', 1], ['c', 2], ['d', 3]]);
  });
});
