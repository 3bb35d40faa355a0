// The web process of the Procfile (`npm run start:web` runs the same): HTTP only, no workers.
import { enableCompileCache } from 'node:module';
import { tuneHeap } from './ops/v8-heap.ts';

// V8's compiled code of the modules kept on disk between starts (os.tmpdir(), or NODE_COMPILE_CACHE):
// a start loads the service's modules in about half the CPU (decisions, "Suite time"). Before the
// modules are imported, hence the dynamic import; without a writable directory it does nothing.
enableCompileCache();
// V8's flags (src/ops/v8-heap.ts), before the service's modules allocate anything.
tuneHeap();
const { run } = await import('./runtime.ts');

await run({ web: true, workers: false, migrate: false });
