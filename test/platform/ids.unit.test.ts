import { describe, expect, it } from 'vitest';
import { isId, newId } from '../../src/lib/ids.ts';
import { listQuerySchema } from '../../src/lib/pagination.ts';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const RAND_CHARS = 16; // the last 16 characters: 80 random bits

/** The 80-bit random part of an id (its last 16 base-32 characters) as a number. */
function randomPart(id: string): bigint {
  let n = 0n;
  for (const ch of id.slice(-RAND_CHARS)) n = n * 32n + BigInt(ALPHABET.indexOf(ch));
  return n;
}

function hamming(a: bigint, b: bigint): number {
  let x = a ^ b;
  let bits = 0;
  while (x) {
    bits += Number(x & 1n);
    x >>= 1n;
  }
  return bits;
}

describe('unguessable ids', () => {
  it('when 10,000 ids are minted in a tight loop, then no two random parts are close, all are unique, and they sort in minting order', () => {
    // Alternating prefixes: the generator is shared, so a neighbour of another kind must not be close either.
    const ids = Array.from({ length: 10_000 }, (_, i) => newId(i % 2 ? 'cs' : 'cus'));
    const bodies = ids.map((id) => id.slice(id.indexOf('_') + 1));

    expect(new Set(ids).size).toBe(ids.length);
    const sorted = [...bodies].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    expect(sorted).toEqual(bodies);

    // Many of them share a millisecond (their first 10 characters): that is the case to look at.
    const times = new Set(bodies.map((b) => b.slice(0, 10)));
    expect(times.size).toBeLessThan(ids.length / 2);

    // Fresh 80-bit values: the nearest two of 10,000 are about 2^53 apart and any two differ in about
    // 40 bits. A counter in the random part gives neighbours 1 apart, differing in 1 or 2 bits.
    const rands = ids.map(randomPart);
    const byValue = [...rands].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    let minGap = 1n << 80n;
    for (let i = 1; i < byValue.length; i++) {
      const gap = byValue[i]! - byValue[i - 1]!;
      if (gap < minGap) minGap = gap;
    }
    expect(minGap > 1n << 32n, `closest random parts are ${minGap} apart`).toBe(true);
    let minBits = 80;
    for (let i = 1; i < rands.length; i++) minBits = Math.min(minBits, hamming(rands[i]!, rands[i - 1]!));
    expect(minBits, 'fewest differing bits between ids minted one after the other').toBeGreaterThanOrEqual(10);
  });

  it('when an id minted before issue 9 (26 characters after the prefix) is checked or used as a cursor, then it is accepted', () => {
    const old = 'cus_01kab2c3d4e5f6g7h8j9kmnpqr';
    expect(old.length - 'cus_'.length).toBe(26);
    expect(isId('cus', old)).toBe(true);
    expect(listQuerySchema('cus', {}).safeParse({ starting_after: old }).success).toBe(true);
    expect(isId('cus', newId('cus'))).toBe(true);
    expect(listQuerySchema('cus', {}).safeParse({ ending_before: newId('cus') }).success).toBe(true);
  });

  it('when a value of another length, prefix or alphabet is checked, then it is refused', () => {
    const id = newId('cus');
    expect(isId('cs', id)).toBe(false);
    expect(isId('cus', id.slice(0, -1))).toBe(false);
    expect(isId('cus', `${id}0`)).toBe(false);
    expect(isId('cus', `${id.slice(0, -1)}u`)).toBe(false); // u is not in Crockford base 32
    expect(isId('cus', `cus_${'0'.repeat(27)}`)).toBe(false);
    expect(listQuerySchema('cus', {}).safeParse({ starting_after: `${id}00` }).success).toBe(false);
  });
});
