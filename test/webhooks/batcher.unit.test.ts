import { describe, expect, it } from 'vitest';
import { Batcher } from '../../src/webhooks/batcher.ts';

/** A run that records its batches and ends when told. */
function controlled() {
  const batches: number[][] = [];
  const ends: Array<() => void> = [];
  const run = (inputs: number[]) => {
    batches.push(inputs);
    return new Promise<number[]>((resolve) => ends.push(() => resolve(inputs.map((i) => i * 10))));
  };
  return { batches, ends, run };
}
const turn = () => new Promise((r) => setImmediate(r));

describe('Batcher', () => {
  it('runs the calls of one turn together, and a lone call on the next turn', async () => {
    const c = controlled();
    const b = new Batcher(c.run);
    const out = [b.push(1), b.push(2)];
    await turn();
    expect(c.batches).toEqual([[1, 2]]);
    c.ends[0]!();
    expect(await Promise.all(out)).toEqual([10, 20]);
    const lone = b.push(3);
    await turn();
    c.ends[1]!();
    expect(await lone).toBe(30);
    expect(c.batches).toEqual([[1, 2], [3]]);
  });

  it('with one run in flight at most, the calls made meanwhile wait for it and then go together', async () => {
    const c = controlled();
    const b = new Batcher(c.run, 100, 1);
    const first = b.push(1);
    await turn();
    const later = [b.push(2), b.push(3)];
    await turn();
    const last = b.push(4);
    await turn();
    expect(c.batches).toEqual([[1]]);
    c.ends[0]!();
    expect(await first).toBe(10);
    await turn();
    expect(c.batches).toEqual([[1], [2, 3, 4]]);
    c.ends[1]!();
    expect(await Promise.all([...later, last])).toEqual([20, 30, 40]);
  });

  it('a failed run fails its calls only, and the next batch still goes', async () => {
    const b = new Batcher<number, number>(async (inputs) => {
      if (inputs.includes(1)) throw new Error('down');
      return inputs;
    }, 100, 1);
    const failed = b.push(1);
    await expect(failed).rejects.toThrow('down');
    expect(await b.push(2)).toBe(2);
  });

  it('never makes a batch larger than maxSize', async () => {
    const c = controlled();
    const b = new Batcher(c.run, 2, 1);
    const all = [1, 2, 3, 4, 5].map((i) => b.push(i));
    await turn();
    expect(c.batches).toEqual([[1, 2]]);
    c.ends[0]!();
    await turn();
    await turn();
    expect(c.batches).toEqual([[1, 2], [3, 4]]);
    c.ends[1]!();
    await turn();
    await turn();
    c.ends[2]!();
    expect(await Promise.all(all)).toEqual([10, 20, 30, 40, 50]);
    expect(c.batches).toEqual([[1, 2], [3, 4], [5]]);
  });
});
