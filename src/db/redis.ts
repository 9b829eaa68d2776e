import { createRequire } from 'node:module';
import type * as IORedis from 'ioredis';
import type { Redis } from 'ioredis';

// Required when Redis is configured: a gateway without it never loads the client.
const require = createRequire(import.meta.url);

/**
 * A Redis connection for work that waits on the request path (rate limits, the response cache). Once it has been
 * connected, a Redis that is away must fail a command at once, for the caller to carry on without it, rather than
 * after the client's reconnect attempts, which took 1.5 to 3 s a request; `commandTimeoutMs` bounds a Redis that
 * is connected but does not answer. Before the first connection commands queue: the gateway has just started.
 */
export class RequestPathRedis {
  readonly client: Redis;
  private connectedOnce = false;

  constructor(url: string, commandTimeoutMs: number) {
    const { Redis: Client } = require('ioredis') as typeof IORedis;
    this.client = new Client(url, { maxRetriesPerRequest: 2, commandTimeout: commandTimeoutMs });
    // Failures reach callers as rejected commands; unhandled, each reconnect attempt would also be logged.
    this.client.on('error', () => {});
    this.client.once('ready', () => {
      this.connectedOnce = true;
    });
  }

  /** The connection's state when a command should not be tried now, else undefined. */
  unavailable(): string | undefined {
    return this.connectedOnce && this.client.status !== 'ready' ? this.client.status : undefined;
  }

  async close(): Promise<void> {
    await this.client.quit().catch(() => this.client.disconnect());
  }
}
