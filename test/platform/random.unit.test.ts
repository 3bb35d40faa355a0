import { describe, expect, it } from 'vitest';
import { randomView } from '../../src/lib/random.ts';

describe('random bytes drawn from a pool', () => {
  it('when views are drawn across many refills of the pool, then each has its size, none repeats another, and the bytes are spread evenly', () => {
    const seen = new Set<string>();
    const counts = new Array<number>(256).fill(0);
    // 5,000 views of 16 bytes: 80,000 bytes, the 4 KB pool refilled about 20 times.
    for (let i = 0; i < 5_000; i++) {
      const view = randomView(16);
      expect(view.length).toBe(16);
      seen.add(view.toString('hex'));
      for (const b of view) counts[b]!++;
    }
    expect(seen.size).toBe(5_000);
    // 312.5 expected per value; a value outside 200..430 has a chance far below one in a million.
    expect(Math.min(...counts)).toBeGreaterThan(200);
    expect(Math.max(...counts)).toBeLessThan(430);
  });
});
