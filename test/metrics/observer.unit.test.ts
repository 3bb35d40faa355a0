import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { histogramObserver } from '../../src/metrics/observer.ts';

/** Two registries with the same histogram: one observed through prom-client, one through histogramObserver. */
function pair() {
  const make = () => {
    const registry = new Registry();
    const histogram = new Histogram({ name: 'h_seconds', help: 'h', labelNames: ['route', 'status'], buckets: [0.005, 0.01, 0.1, 1], registers: [registry] });
    return { registry, histogram };
  };
  return { plain: make(), fast: make() };
}

describe('histogramObserver', () => {
  it('counts exactly as prom-client does, across label sets, bounds, values past the last bound and resets', async () => {
    const { plain, fast } = pair();
    const sets = [{ route: '/a', status: '200' }, { route: '/b', status: '404' }];
    const fastObservers = sets.map((l) => histogramObserver(fast.histogram, { ...l }));
    const plainObservers = sets.map((l) => plain.histogram.labels({ ...l }).observe);
    // Bounds themselves (value <= bound counts in that bucket), between them, zero, negative, past the last.
    const values = [0, 0.005, 0.0050001, 0.01, 0.05, 0.1, 0.3, 1, 1.5, 42, -1, 0.004];
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 500; i++) {
        const v = values[(i * 7 + round) % values.length]!;
        const k = (i + round) % sets.length;
        plainObservers[k]!(v);
        fastObservers[k]!(v);
      }
      expect(await fast.registry.metrics()).toBe(await plain.registry.metrics());
      // A reset starts a new map: the held entry is dropped and found again.
      plain.registry.resetMetrics();
      fast.registry.resetMetrics();
      expect(await fast.registry.metrics()).toBe(await plain.registry.metrics());
    }
  });

  it('refuses a value that is not a finite number, as prom-client does, and keeps counting after it', async () => {
    const { plain, fast } = pair();
    const f = histogramObserver(fast.histogram, { route: '/a', status: '200' });
    const p = plain.histogram.labels({ route: '/a', status: '200' }).observe;
    f(0.2);
    p(0.2);
    for (const bad of [Number.NaN, Infinity]) {
      expect(() => p(bad)).toThrow(TypeError);
      expect(() => f(bad)).toThrow(TypeError);
    }
    f(0.02);
    p(0.02);
    expect(await fast.registry.metrics()).toBe(await plain.registry.metrics());
    expect(await fast.registry.metrics()).toContain('h_seconds_count{route="/a",status="200"} 2');
  });

  it('adds to the entry prom-client made, without calling prom-client again after the first observation', () => {
    const { fast } = pair();
    const labels = { route: '/a', status: '200' };
    const f = histogramObserver(fast.histogram, labels);
    f(0.5);
    const map = (fast.histogram as unknown as { hashMap: Record<string, { count: number; sum: number; bucketValues: Record<string, number> }> }).hashMap;
    const [entry] = Object.values(map);
    // prom-client's observe replaced: a second observation must still land in the same entry.
    const original = fast.histogram.labels;
    fast.histogram.labels = () => {
      throw new Error('called again');
    };
    try {
      f(0.05);
      f(7);
    } finally {
      fast.histogram.labels = original;
    }
    expect(entry!.count).toBe(3);
    expect(entry!.sum).toBeCloseTo(7.55, 10);
    expect(entry!.bucketValues['0.1']).toBe(1);
    expect(entry!.bucketValues['1']).toBe(1);
  });
});
