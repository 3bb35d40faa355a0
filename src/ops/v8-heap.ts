import { setFlagsFromString } from 'node:v8';

/**
 * V8 flags every process of the service sets first thing, before its modules load (src/main.ts,
 * web.ts, worker.ts).
 *
 * `--no-allocation-site-pretenuring` (issue 28): V8 watches where objects are allocated, and when
 * most objects of one place in the code survive a young-generation GC, it allocates that place's
 * objects in the old generation from then on. Starting the job workers makes thousands of objects
 * that live on, at places the HTTP path shares with them, and V8 then pretenured what every request
 * allocates: measured under 10 s of GETs at 50 connections, 7.5 to 8 KB of each request went
 * straight to the old generation, which a full mark-compact then collected every 2 s, about 20 µs
 * of CPU a request between the main thread and V8's helper threads (the web process alone: 0.5 KB,
 * no full GC). With the flag, the same process allocates each request in the young generation,
 * where it dies. docs/decisions.md (issue 28, the session of 2026-11-28) has the measurements.
 */
export const V8_FLAGS = ['--no-allocation-site-pretenuring'] as const;

export function tuneHeap(): void {
  for (const flag of V8_FLAGS) setFlagsFromString(flag);
}
