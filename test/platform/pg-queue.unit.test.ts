import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

// patches/postgres+3.4.9.patch: postgres.js keeps its pool's connections (open, busy, full, …)
// and each connection's sent queries in a Queue whose `shift` leaves the slot it took as
// `undefined` and starts over only when the queue is empty. Under a steady load the busy queue is
// never empty, so the array grew by a slot for every query and `remove` (called for every query
// when its connection moves between queues) scanned all of them: a query cost more the more
// queries the process had run (issue 28). The patch compacts the array and searches from the head.
interface Queue<T> {
  readonly length: number;
  push(x: T): T;
  shift(): T | undefined;
  remove(x: T): T | null;
}
type QueueFactory = <T>(initial?: T[]) => Queue<T>;

const load = async (dir: string): Promise<QueueFactory> =>
  ((await import(pathToFileURL(path.resolve('node_modules/postgres', dir, 'queue.js')).href)) as { default: QueueFactory }).default;

/** A tiny deterministic generator, so that a failure can be replayed. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1_664_525 + 1_013_904_223) >>> 0;
    return s / 2 ** 32;
  };
}

/** The longest array `indexOf` was asked to search while `run` ran. */
function longestSearch(run: () => void): number {
  const original = Array.prototype.indexOf;
  let longest = 0;
  Array.prototype.indexOf = function (this: unknown[], ...args: Parameters<typeof original>) {
    longest = Math.max(longest, this.length);
    return original.apply(this, args);
  };
  try {
    run();
  } finally {
    Array.prototype.indexOf = original;
  }
  return longest;
}

describe("postgres.js's queue (patched)", () => {
  it('is applied to the ES module, CommonJS and Cloudflare copies', async () => {
    for (const dir of ['src', 'cjs/src', 'cf/src']) {
      const queue = (await load(dir)) as unknown as { toString(): string };
      expect(queue.toString(), dir).toContain('xs.indexOf(x, index)');
    }
  });

  it('when 100,000 random pushes, shifts and removes run, then it answers as a plain FIFO list does', async () => {
    const Queue = await load('src');
    const q = Queue<number>();
    const model: number[] = [];
    const next = random(28);
    for (let i = 0; i < 100_000; i++) {
      const r = next();
      if (r < 0.45) expect(q.push(i)).toBe(model[model.push(i) - 1]);
      else if (r < 0.9) expect(q.shift()).toBe(model.shift());
      else {
        // A present item (from the middle) or one already shifted out.
        const x = model.length > 0 && next() < 0.7 ? model[Math.floor(next() * model.length)]! : i - 1_000;
        const at = model.indexOf(x);
        if (at >= 0) model.splice(at, 1);
        expect(q.remove(x)).toBe(at >= 0 ? x : null);
      }
      expect(q.length).toBe(model.length);
    }
  });

  it('when a queue that is never empty is shifted 100,000 times, then a remove searches its live items only', async () => {
    const Queue = await load('src');
    // As the pool's busy connections under load: ten, each shifted to take a query and pushed back.
    const connections = Array.from({ length: 10 }, (_, i) => ({ id: i }));
    const busy = Queue(connections);
    const longest = longestSearch(() => {
      for (let i = 0; i < 100_000; i++) {
        const c = busy.shift()!;
        busy.remove(c); // move(): out of the queue it is in (no longer there: shifted), then back in
        busy.push(c);
      }
    });
    expect(busy.length).toBe(10);
    // Before the patch the array held every shifted slot: 100,009 here.
    expect(longest).toBeLessThan(200);
  });
});
