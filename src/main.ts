// `npm start`: migrations, then the web process and every worker in one process; on a machine
// without Postgres or Redis, embedded ones (src/ops/local-services.ts).
import { run } from './runtime.ts';

await run({ web: true, workers: true, migrate: true, embed: true });
