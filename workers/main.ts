// `npm run start:worker`: the worker process of the Procfile.
import { run } from '../src/runtime.ts';

await run({ web: false, workers: true, migrate: false });
