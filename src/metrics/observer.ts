import type { Histogram } from 'prom-client';

/** What prom-client 15's Histogram keeps per label set (lib/histogram.js, createBaseValues). */
interface Entry {
  labels: object;
  bucketValues: Record<string, number>;
  sum: number;
  count: number;
}
interface Internals {
  hashMap?: Record<string, Entry>;
  upperBounds?: unknown;
}

/**
 * `histogram.labels(labels).observe`, with the same counts, for an observation made on every
 * request (issue 28: prom-client's observe validates the labels, builds their hash string and turns
 * the bound into a property name each time: 640 to 770 ns a call in a loop, against 57 to 73). The label
 * set's entry is found once, by the labels object prom-client keeps in it, and then added to as
 * prom-client adds: the sum, the count, and the first bucket whose bound is not below the value.
 * prom-client's own observe runs instead whenever the held entry may not be the live one: the first
 * observation, after a reset (a new map), a value that is not a finite number (it throws, as
 * before), or a prom-client whose internals are not these. Never used with `remove()` or `zero()`,
 * which would leave the held entry out of the map.
 */
export function histogramObserver(histogram: Histogram<string>, labels: Record<string, string>): (value: number) => void {
  const slow = histogram.labels(labels).observe;
  const internals = histogram as unknown as Internals;
  const bounds = internals.upperBounds;
  if (!Array.isArray(bounds) || !bounds.every((b) => typeof b === 'number')) return slow;
  // The bucket's property name as prom-client makes it (a number used as a key).
  const names = bounds.map(String);
  let map: Record<string, Entry> | undefined;
  let entry: Entry | undefined;
  return (value) => {
    if (entry === undefined || internals.hashMap !== map || !Number.isFinite(value)) {
      slow(value);
      map = internals.hashMap;
      entry = map ? Object.values(map).find((e) => e.labels === labels) : undefined;
      return;
    }
    entry.sum += value;
    entry.count += 1;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= (bounds[i] as number)) {
        entry.bucketValues[names[i]!]! += 1;
        return;
      }
    }
  };
}
