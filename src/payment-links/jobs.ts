import type { Logger } from '../lib/logger.ts';
import { newId } from '../lib/ids.ts';
import type { Queues } from '../queue/queues.ts';
import type { ViewRecord } from './counters.ts';
import type { LinkSource } from './schema.ts';

/** Enqueues the counter job of one successful link payment; its id makes a second enqueue a no-op. */
export async function enqueuePaymentCount(queues: Queues, paymentId: string): Promise<void> {
  await queues.get('link-counters').add('payment', { paymentId }, { jobId: paymentId });
}

const RETRY_MS = 1000;
const MAX_RETRIES = 60;
/** A batch exists only in Redis until it is applied: its job outlasts a Postgres outage of about half an hour. */
const VIEW_JOB_ATTEMPTS = 12;

/**
 * Page views on their way to the link-counters queue. A page load only appends to a buffer, so
 * it never waits on Redis or Postgres; the buffer leaves as one job per `maxBatch` views or per
 * `maxDelayMs`, whichever comes first. A batch Redis refuses is retried as the same job, so a
 * reply lost after Redis stored it cannot count its views twice.
 */
export class ViewRecorder {
  private buffer: ViewRecord[] = [];
  private timer: NodeJS.Timeout | undefined;
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
    this.maxDelayMs = opts.maxDelayMs ?? 50;
  }

  /** Records one page load and returns the view id. */
  record(link: string, source: LinkSource): string {
    const view: ViewRecord = { id: newId('plv'), link, source, at: Date.now() };
    this.buffer.push(view);
    if (this.buffer.length >= this.maxBatch) this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), this.maxDelayMs);
      this.timer.unref();
    }
    return view.id;
  }

  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.buffer.length === 0) return;
    const batch = this.buffer;
    this.buffer = [];
    this.send(batch, 0);
  }

  private send(batch: ViewRecord[], attempt: number): void {
    const sent: Promise<void> = this.queues
      .get('link-counters')
      .add('views', { views: batch }, { jobId: batch[0]!.id, removeOnComplete: true, attempts: VIEW_JOB_ATTEMPTS })
      .then(
        () => undefined,
        (err: Error) => {
          if (this.closed || attempt >= MAX_RETRIES) {
            this.log.error({ err: err.message, views: batch.length }, 'page views could not be queued and are not counted');
            return;
          }
          this.log.warn({ err: err.message, views: batch.length, attempt }, 'queueing page views failed; retrying');
          setTimeout(() => this.send(batch, attempt + 1), RETRY_MS).unref();
        },
      )
      .finally(() => this.inflight.delete(sent));
    this.inflight.add(sent);
  }

  /** Sends what is buffered and waits for it: called on shutdown. */
  async close(): Promise<void> {
    this.closed = true;
    this.flush();
    while (this.inflight.size) await Promise.all([...this.inflight]);
  }
}
