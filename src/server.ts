import { setFlagsFromString } from 'node:v8';
import { loadConfig } from './config.ts';
import { startRuntime } from './runtime.ts';

const log = (line: string) => process.stderr.write(`${line}\n`);

async function main(): Promise<void> {
  const config = loadConfig();
  // Under load V8 let the old generation grow to about four times what a full collection kept (the gateway's
  // node went from ~200 to ~370 MB at 64 connections, mostly garbage); a bounded growth keeps the process near
  // its live size for a few percent of throughput. The flag is read at each collection, so setting it here works.
  if (config.heapGrowthPercent > 0) setFlagsFromString(`--heap-growing-percent=${config.heapGrowthPercent}`);
  const runtime = await startRuntime(config, { log });
  let closing: Promise<void> | undefined;
  const shutdown = (signal: string) => {
    if (closing) return;
    log(`${signal} received: finishing requests and pending appends`);
    closing = runtime.close().then(
      () => process.exit(0),
      (error) => {
        log(`shutdown failed: ${String(error)}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));

  let address: string;
  try {
    address = await runtime.app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await runtime.close();
    throw error;
  }
  const store = config.eventStore === 'esdb' ? `EventStoreDB at ${config.esdbUrl}` : 'PostgreSQL';
  const where = config.databaseUrl ? 'external PostgreSQL' : `embedded PostgreSQL in ${config.dataDir}`;
  log(`gateway listening on ${address} (events: ${store}; read models: ${where})`);
  log(
    `dashboard at ${address}/dashboard: sign in with an API key, or the admin token for the operator's view`,
  );
  if (runtime.demo) {
    log(`Demo account ${runtime.demo.account_id} created with ${config.demoCreditCents} cents of credit.`);
    log('Its API key, shown this once:');
    process.stdout.write(`${runtime.demo.key}\n`);
  }
}

main().catch((error) => {
  log(`gateway failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
