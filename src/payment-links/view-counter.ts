import type { Logger } from '../lib/logger.ts';
import { newId } from '../lib/ids.ts';
import type { Queues } from '../queue/queues.ts';
import type { ViewRecord } from './counters.ts';
import { enqueueViews } from './jobs.ts';
import type { LinkSource } from './schema.ts';

/** How often batches that Redis refused are offered again, for as long as Redis is away. */
const RETRY_MS = 1000;
/** View records kept for a Redis that is away (about 100 bytes each); beyond this the oldest are dropped. */
const MAX_PARKED_RECORDS = 200_000;

/** The page loads the records count. */
const loadsOf = (batch: readonly ViewRecord[]) => batch.reduce((n, v) => n + (v.views ?? 1), 0);

/**
 * The view counter of the public link pages (the counted views are applied by counters.ts).
 * Page views on their way to the link-counters queue. A page load only adds one to its link and
 * source's record in a buffer, so it never waits on Redis or Postgres; the buffer leaves as one
 * job per `maxBatch` records or per `maxDelayMs`, whichever comes first, and each record becomes
 * one row however many loads it counts (issue 28: a row per load cost Postgres about 30 µs a page
 * more than the link page's floors). A batch Redis refuses is parked and offered again, in order,
 * every RETRY_MS for as long as the process runs (a Redis outage of any length, up to
 * MAX_PARKED_RECORDS records), always as the same job, so a reply lost after Redis stored it
 * cannot count its views twice.
 */
export class ViewRecorder {
  private buffer: ViewRecord[] = [];
  /** The buffer's record of each link and source (`link source`). */
  private open = new Map<string, ViewRecord>();
  private timer: NodeJS.Timeout | undefined;
  private parked: ViewRecord[][] = [];
  private parkedRecords = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly inflight = new Set<Promise<void>>();
  private closed = false;
  private readonly queues: Queues;
  private readonly log: Logger;
  private readonly maxBatch: number;
  private readonly maxDelayMs: number;

  constructor(queues: Queues, log: Logger, opts: { maxBatch?: number; maxDelayMs?: number } = {}) {
    this.queues = queues;
    this.log = log;
    this.maxBatch = opts.maxBatch ?? 500;
    // 250 ms (50 until issue 28): a job costs the same for 10 views as for 400, and at 50 ms a busy
    // link page sent twenty a second; the link page's CPU a load fell by about a fifth (profiled).
    this.maxDelayMs = opts.maxDelayMs ?? 250;
  }

  /** Records one page load. */
  record(link: string, source: LinkSource): void {
    const key = `${link} ${source}`;
    const open = this.open.get(key);
    if (open) {
      open.views!++;
      return;
    }
    const view: ViewRecord = { id: newId('plv'), link, source, at: Date.now(), views: 1 };
    this.open.set(key, view);
    this.buffer.push(view);
    if (this.buffer.length >= this.maxBatch) this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), this.maxDelayMs);
      this.timer.unref();
    }
  }

  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.buffer.length === 0) return;
    const batch = this.buffer;
    this.buffer = [];
    this.open.clear();
    // While batches are parked Redis is most likely away: join them rather than fail once more.
    if (this.parked.length > 0 && !this.closed) this.park(batch);
    else this.track(this.send(batch).catch((err: Error) => this.park(batch, err)));
  }

  private send(batch: ViewRecord[]): Promise<unknown> {
    return enqueueViews(this.queues, batch);
  }

  private track(p: Promise<unknown>): void {
    const done: Promise<void> = p.then(() => undefined).finally(() => this.inflight.delete(done));
    this.inflight.add(done);
  }

  private park(batch: ViewRecord[], err?: Error): void {
    if (this.closed) {
      this.log.error({ err: err?.message, views: loadsOf(batch) }, 'page views could not be queued and are not counted');
      return;
    }
    if (this.parked.length === 0) this.log.warn({ err: err?.message, views: loadsOf(batch) }, 'queueing page views failed; keeping them until Redis answers');
    this.parked.push(batch);
    this.parkedRecords += batch.length;
    while (this.parkedRecords > MAX_PARKED_RECORDS && this.parked.length > 1) {
      const dropped = this.parked.shift()!;
      this.parkedRecords -= dropped.length;
      this.log.error({ views: loadsOf(dropped) }, 'too many page views waiting for Redis; the oldest are not counted');
    }
    if (!this.retryTimer) {
      this.retryTimer = setTimeout(() => this.track(this.resend()), RETRY_MS);
      this.retryTimer.unref();
    }
  }

  /** Offers the parked batches again, oldest first, until one is refused. */
  private async resend(): Promise<void> {
    this.retryTimer = undefined;
    const sent = this.parked.length;
    while (this.parked.length > 0) {
      const batch = this.parked.shift()!;
      this.parkedRecords -= batch.length;
      try {
        await this.send(batch);
      } catch (err) {
        this.parked.unshift(batch);
        this.parkedRecords += batch.length;
        if (this.closed) return this.dropParked(err as Error);
        this.retryTimer ??= setTimeout(() => this.track(this.resend()), RETRY_MS);
        this.retryTimer.unref();
        return;
      }
    }
    if (sent > 0) this.log.info({ batches: sent }, 'page views waiting for Redis are queued');
  }

  private dropParked(err: Error): void {
    this.log.error({ err: err.message, views: loadsOf(this.parked.flat()) }, 'page views could not be queued and are not counted');
    this.parked = [];
    this.parkedRecords = 0;
  }

  /** Sends what is buffered or parked and waits for it (one more try each): called on shutdown. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.flush();
    if (this.parked.length > 0) this.track(this.resend());
    while (this.inflight.size) await Promise.all([...this.inflight]);
  }
}
