import { sendEmailJob } from '../src/email/send.ts';
import type { WorkerDefinition } from './types.ts';

/** One job per email (jobId = email id): sends it and records the outcome (src/email/send.ts). Its repair pass is `reconcileEmails`. */
export const emailWorker: WorkerDefinition = {
  queue: 'email',
  concurrency: 10,
  process: (job, s) => sendEmailJob(s, job.id!),
};
