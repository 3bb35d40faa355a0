import { idFloor } from '../lib/ids.ts';

/**
 * Following an account's events through `GET /v1/events` without missing one (docs/decisions.md,
 * "listen"). An event's id is minted when the event is inserted, but its transaction commits later,
 * and transactions commit in any order: an event may become visible after one with a greater id has
 * already been read, so "everything after the last id seen" would lose it. Each poll therefore reads
 * every event whose id is above a floor that trails the service's time by an overlap window, in id
 * order, and a set of the ids already seen above the floor drops the repeats.
 *
 * Why nothing is missed: an id carries the millisecond it was minted (DESIGN 2), and the event
 * commits less than OVERLAP_MS after that (clock differences between the service's processes
 * included). After a complete poll the floor is raised to at most "the service's time when that poll
 * began, minus the overlap". An event the poll did not return committed after the poll began, so it
 * was minted after the new floor, and the next poll returns it. The service's time is never taken
 * from this machine's clock: it is a lower bound made of the `created` of the events seen, plus how
 * long ago (on the monotonic clock) they were seen.
 */

/** How late an event may commit after its id was minted, clock differences between processes included. */
export const OVERLAP_MS = 60_000;

/** An event as the API lists it: listen forwards the whole object, reading only these fields. */
export interface ListedEvent {
  id: string;
  type: string;
  created: number;
  [field: string]: unknown;
}

/** One page of `GET /v1/events?ending_before=<cursor>`: the events just above the cursor. */
export type ReadPage = (endingBefore: string) => Promise<{ data: ListedEvent[]; has_more: boolean }>;

export interface FollowerOptions {
  /** Default OVERLAP_MS. */
  overlapMs?: number;
  /** A monotonic clock in ms (performance.now); tests move it by hand. */
  now?: () => number;
}

export class EventFollower {
  readonly #overlapMs: number;
  readonly #now: () => number;
  /** Every event above the floor not in `#seen` is yet to be handed on. */
  #floor: string;
  /** The ids above the floor already handed on (or deliberately skipped): a repeat is dropped. */
  readonly #seen = new Set<string>();
  /**
   * A lower bound of the service's clock, as (service ms − monotonic ms): an event listed at
   * monotonic time r was created by then, so `created·1000 − r + now()` is never ahead of the service.
   */
  #serviceOffset = -Infinity;

  constructor(floorMs: number, opts: FollowerOptions = {}) {
    this.#overlapMs = opts.overlapMs ?? OVERLAP_MS;
    this.#now = opts.now ?? (() => performance.now());
    this.#floor = idFloor('evt', floorMs);
  }

  /** Following from the service's newest event, `newestCreated` (unix s), or from the beginning for an account with none. */
  static fromNewest(newestCreated: number | null, opts: FollowerOptions = {}): EventFollower {
    const f = new EventFollower(newestCreated === null ? 0 : newestCreated * 1000 - (opts.overlapMs ?? OVERLAP_MS), opts);
    if (newestCreated !== null) f.#observe(newestCreated);
    return f;
  }

  /** How many ids the repeat set holds: the events of about one overlap window. */
  get remembered(): number {
    return this.#seen.size;
  }

  get floor(): string {
    return this.#floor;
  }

  /**
   * Reads every event above the floor, page by page in id order, and hands each one not seen before
   * to `onEvent`, in id order, as soon as its page arrives. A page that fails throws: the events
   * already handed on stay seen, the floor does not move, and the next poll reads the rest.
   */
  async poll(read: ReadPage, onEvent: (e: ListedEvent) => Promise<void> | void): Promise<void> {
    const serviceTimeAtStart = this.#serviceOffset + this.#now();
    let cursor = this.#floor;
    for (;;) {
      const page = await read(cursor);
      // `ending_before` answers the events just above the cursor, presented newest first.
      const ascending = [...page.data].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      for (const e of ascending) {
        this.#observe(e.created);
        if (this.#seen.has(e.id)) continue;
        this.#seen.add(e.id);
        await onEvent(e);
      }
      if (!page.has_more || ascending.length === 0) break;
      cursor = ascending[ascending.length - 1]!.id;
    }
    // Complete: whatever this poll did not see committed after it began, so it was minted after
    // (service time at the start − the overlap).
    if (serviceTimeAtStart > -Infinity) this.#raiseFloor(idFloor('evt', serviceTimeAtStart - this.#overlapMs));
  }

  #observe(createdUnix: number): void {
    this.#serviceOffset = Math.max(this.#serviceOffset, createdUnix * 1000 - this.#now());
  }

  #raiseFloor(floor: string): void {
    if (floor <= this.#floor) return;
    this.#floor = floor;
    // Ids at or below the floor are never listed again (the cursor excludes them).
    for (const id of this.#seen) if (id <= floor) this.#seen.delete(id);
  }
}
