import type { Job } from 'bullmq';
import { within } from '../queue/bound.ts';
import { QUEUE_NAMES } from '../queue/queues.ts';
import type { Services } from '../services.ts';

// What installments enqueue: one delayed `charge` job per attempt of a part, at its next_attempt_at
// (its date, then each retry of the dunning schedule). The handler is charge.ts (chargePart); the
// worker is workers/installments.ts; the `installments-due` repair pass re-enqueues a lost one.

export interface ChargeJobData {
  planId: string;
  number: number;
}

/**
 * The job of attempt `attempt` (from 1) of part `number`: a new id per attempt, so a retry is never
 * taken for the attempt before it (BullMQ keeps finished jobs for a while, and ignores an add whose
 * id it still holds). BullMQ 6 refuses ':' in a custom id, hence the dashes.
 */
export const chargeJobId = (planId: string, number: number, attempt: number): string => `charge-${planId}-${number}-${attempt}`;

const queue = (s: Services) => s.queues.get(QUEUE_NAMES.installments);

/**
 * Makes sure the charge of attempt `attempt` of a part runs at `at`: added when missing; a delayed
 * job of the same attempt due later (a card update brings a retry forward) is promoted; one that
 * already ended (ran too early, or failed for good) is removed and added again. Bounded: the caller
 * may be answering a request, and the repair pass enqueues what could not be. Answers whether a
 * job was added or promoted (false: one was already waiting, delayed to its time or running).
 */
export async function ensureChargeJob(s: Services, planId: string, number: number, attempt: number, at: Date): Promise<boolean> {
  const id = chargeJobId(planId, number, attempt);
  const data: ChargeJobData = { planId, number };
  const delay = Math.max(0, at.getTime() - Date.now());
  return within(
    (async () => {
      const existing: Job | undefined = await queue(s).getJob(id);
      if (existing) {
        const state = await existing.getState();
        if (state === 'delayed' && delay === 0) return existing.promote().then(() => true, () => false);
        if (state !== 'completed' && state !== 'failed') return false; // waiting, active, or delayed to its time
        await existing.remove().catch(() => {});
      }
      await queue(s).add('charge', data, { jobId: id, delay });
      return true;
    })(),
  );
}

/** The plan ended (cancelled, defaulted, completed): its waiting jobs go. A job already running finds it not ACTIVE. */
export async function removeChargeJobs(s: Services, parts: ReadonlyArray<{ plan_id: string; number: number; attempt_count: number }>): Promise<void> {
  await Promise.all(parts.map((p) => queue(s).remove(chargeJobId(p.plan_id, p.number, p.attempt_count + 1)).catch(() => 0)));
}
