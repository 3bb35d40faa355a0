// The web process of the Procfile (`npm run start:web` runs the same): HTTP only, no workers.
import { run } from './runtime.ts';

await run({ web: true, workers: false, migrate: false });
