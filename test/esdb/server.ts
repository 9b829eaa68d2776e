import { Server, ServerCredentials, type ServerUnaryCall, type sendUnaryData } from '@grpc/grpc-js';
import { appendHandler } from './append.ts';
import { ServerFeaturesService, StreamsService, SupportedMethod, SupportedMethods } from './proto.ts';
import { readHandler } from './read.ts';
import { EventLog } from './store.ts';

export interface EsdbTestServer {
  url: string;
  stop(): Promise<void>;
}

const SHUTDOWN_GRACE_MS = 2_000;

/** An in-memory EventStoreDB speaking enough of the gRPC protocol for `@eventstore/db-client`. */
export async function startEsdbServer(): Promise<EsdbTestServer> {
  const log = new EventLog();
  const open = new Set<AbortController>();
  const server = new Server();

  // Unlisted RPCs (Delete, Tombstone, BatchAppend, ...) answer UNIMPLEMENTED via grpc-js defaults.
  server.addService(StreamsService, { read: readHandler(log, open), append: appendHandler(log) });
  server.addService(ServerFeaturesService, { getSupportedMethods });

  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    );
  });

  return {
    url: `esdb://127.0.0.1:${port}?tls=false`,
    async stop() {
      // Live subscriptions never finish on their own; end them so a graceful shutdown can complete.
      for (const controller of open) controller.abort();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, SHUTDOWN_GRACE_MS);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}

// Advertising only Read and Append makes the client fall back from BatchAppend to plain Append.
function getSupportedMethods(
  _call: ServerUnaryCall<unknown, unknown>,
  callback: sendUnaryData<InstanceType<typeof SupportedMethods>>,
): void {
  const methods = [StreamsService.read, StreamsService.append].map(({ path }) => {
    const [, service = '', method = ''] = path.toLowerCase().split('/');
    return new SupportedMethod().setServiceName(service).setMethodName(method);
  });
  callback(null, new SupportedMethods().setMethodsList(methods).setEventStoreServerVersion('24.10.0'));
}
