/**
 * Sets `key` in a per-process cache kept to `max` entries: when it is full, its oldest entry (the
 * first inserted) is dropped first. One rule for the service's in-memory caches: keys, the use of
 * keys, URLs' origins and answers, formatted amounts.
 */
export function setBounded<K, V>(map: Map<K, V>, max: number, key: K, value: V): void {
  if (map.size >= max) map.delete(map.keys().next().value!);
  map.set(key, value);
}
