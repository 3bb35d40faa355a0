import { chargePart } from '../src/installments/charge.ts';
import type { ChargeJobData } from '../src/installments/jobs.ts';
import type { WorkerDefinition } from './types.ts';

/**
 * Installment charges: one delayed job per attempt of a part (jobId `charge-<plan>-<n>-<attempt>`,
 * src/installments/jobs.ts), handled by chargePart (src/installments/charge.ts), idempotent: a part
 * paid or ended, a plan no longer ACTIVE, or a job of an earlier attempt does nothing. A job that
 * finds another charge of its plan in flight, or fires well before its time, throws so that BullMQ
 * tries it again; the `installments-due` repair pass enqueues one that was lost.
 */
export const installmentsWorker: WorkerDefinition<ChargeJobData & { attempt?: number }> = {
  queue: 'installments',
  concurrency: 5,
  async process(job, s) {
    // Our ids name the attempt (chargeJobId); a job added any other way charges the part if due, once, as any.
    const ours = /^charge-.+-(\d+)$/.exec(job.id ?? '');
    const out = await chargePart(s, job.data.planId, job.data.number, { attempt: ours ? Number(ours[1]) : undefined });
    if (out.kind === 'in_progress' || out.kind === 'not_due' || out.kind === 'unavailable') throw new Error(`installment charge ${out.kind}: tried again`);
    return out.kind;
  },
};
