import { loadConfig } from '../../src/config.ts';
import { startRuntime } from '../../src/runtime.ts';

// Run as its own process by the fuzzer: starts the gateway's runtime as `npm start` would (from the environment),
// prints its live route table, and exits without waiting for a graceful close.
const runtime = await startRuntime(loadConfig(), { log: () => {} });
await runtime.app.ready();
process.stdout.write(runtime.app.printRoutes({ commonPrefix: false }));
process.exit(0);
