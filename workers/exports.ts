import { runExportJob } from '../src/exports/run.ts';
import type { WorkerDefinition } from './types.ts';

/**
 * One job per export run (jobId = run id): writes its CSV file into Postgres (src/exports/run.ts).
 * Two at a time per worker process: an export is long and reads many rows. Its repair pass is
 * `reconcileExports`; a killed worker's job runs again once its lock expires, from the start.
 */
export const exportsWorker: WorkerDefinition = {
  queue: 'exports',
  concurrency: 2,
  process: (job, s) => runExportJob(s, job.id!),
};
