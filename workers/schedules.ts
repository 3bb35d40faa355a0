import type { QueueName } from '../src/queue/queues.ts';
import type { Services } from '../src/services.ts';

export interface Schedule {
  queue: QueueName;
  id: string;
  everyMs: number;
  name: string;
}

/** The keeper looks at least this often, and at most once a second, whatever the intervals. */
const MAX_CHECK_MS = 60_000;
const MIN_CHECK_MS = 1000;

/**
 * Keeps the repeating jobs of this process in Redis. A job scheduler is only a key in Redis: a
 * FLUSHALL, or a restart of a Redis without persistence, removes it and its next job, and nothing
 * would run again until a process restarted. So every worker process looks at its schedules and
 * upserts one whose scheduler or next job is missing; the re-created scheduler runs at once.
 * Each schedule is looked at once per its own interval (at least 1 s, at most 60 s), the most
 * frequent one at every tick: when any is found missing, as after a flush, every schedule is looked
 * at in the same tick. So a flush is repaired within one tick (1 s with all workers), a single lost
 * schedule within its interval, and an idle process does not ask Redis about every schedule every
 * second (issue 28: that was about 30 of the 125 commands a second of an idle `npm start`).
 * Upserting is idempotent, so several worker processes may repair the same schedule at once.
 */
export class ScheduleKeeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /** Whether the last check failed: an outage is logged once when it starts and once when it ends. */
  private failing = false;
  private readonly s: Services;
  /** Most frequent first: the one looked at every tick comes first, and a loss found there widens the tick. */
  private readonly schedules: Schedule[];
  /** When each schedule was last found in place (or made); none yet: looked at on the next tick. */
  private readonly checkedAt = new Map<Schedule, number>();
  readonly checkMs: number;

  constructor(s: Services, schedules: Schedule[]) {
    this.s = s;
    this.schedules = [...schedules].sort((a, b) => a.everyMs - b.everyMs);
    this.checkMs = this.intervalOf(this.schedules[0] ?? { everyMs: MAX_CHECK_MS });
  }

  /** How often a schedule is looked at: its own interval, at least 1 s and at most 60 s. */
  private intervalOf(sch: Pick<Schedule, 'everyMs'>): number {
    return Math.max(MIN_CHECK_MS, Math.min(MAX_CHECK_MS, sch.everyMs));
  }

  /**
   * Upserts every schedule (an interval changed in the settings applies now), then keeps checking.
   * A Redis that is away or slow at start (a command past the shared connection's 1 s timeout)
   * does not stop the process: the checks create what is missing once it answers.
   */
  async start(): Promise<void> {
    if (this.schedules.length === 0) return;
    try {
      for (const sch of this.schedules) {
        await this.upsert(sch);
        this.checkedAt.set(sch, Date.now());
      }
    } catch (err) {
      this.s.log.warn({ err: (err as Error).message, everyMs: this.checkMs }, 'creating job schedules failed at start; retrying every interval');
      this.failing = true;
    }
    this.timer = setInterval(() => {
      // One check at a time (a slow Redis): a tick that finds one still running is skipped.
      this.running ??= this.check()
        .then(
          () => {
            if (this.failing) this.s.log.info('job schedules checked again');
            this.failing = false;
          },
          (err: Error) => {
            if (!this.failing) this.s.log.warn({ err: err.message, everyMs: this.checkMs }, 'checking job schedules failed; retrying every interval');
            this.failing = true;
          },
        )
        .finally(() => (this.running = undefined));
    }, this.checkMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async check(): Promise<void> {
    const now = Date.now();
    let lost = false;
    for (const sch of this.schedules) {
      // Due when its interval has passed, give or take half a tick (timers fire a little early or late).
      const due = now - (this.checkedAt.get(sch) ?? 0) >= this.intervalOf(sch) - this.checkMs / 2;
      if (!due && !lost) continue;
      const q = this.s.queues.get(sch.queue);
      const current = await q.getJobScheduler(sch.id);
      // The next job is created when the previous one starts; a missing one means the chain broke.
      const next = !current?.next ? 'unknown' : await q.getJobState(`repeat:${sch.id}:${current.next}`);
      if (!current || current.every !== sch.everyMs || next === 'unknown') {
        lost = true;
        this.s.log.warn({ queue: sch.queue, scheduler: sch.id, found: current ? 'scheduler without its next job' : 'nothing' }, 'job schedule missing from Redis; re-created');
        await this.upsert(sch);
      }
      this.checkedAt.set(sch, now);
    }
  }

  private async upsert(sch: Schedule): Promise<void> {
    await this.s.queues.get(sch.queue).upsertJobScheduler(sch.id, { every: sch.everyMs }, { name: sch.name });
  }
}
