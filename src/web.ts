// `npm run start:web`: the HTTP process of the Procfile.
import { run } from './runtime.ts';

await run({ web: true, workers: false, migrate: false });
