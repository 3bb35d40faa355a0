// The worker process of the Procfile (`npm run start:worker` runs the same): every worker, no HTTP.
import { run } from './runtime.ts';

await run({ web: false, workers: true, migrate: false });
