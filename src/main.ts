// `npm start`: migrations, then the web process and every worker in one process.
import { run } from './runtime.ts';

await run({ web: true, workers: true, migrate: true });
