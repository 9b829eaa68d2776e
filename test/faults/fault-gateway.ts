import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:http';

export { Agent };

import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/db/embedded.ts';
import { type ServerProcess, spawnServer } from '../support/server-process.ts';

/** A gateway process of the fault suite: its own data directory, port and admin token. */
export interface FaultGateway {
  server: ServerProcess;
  url: string;
  env: Record<string, string>;
  dataDir: string;
  /** The demo account's key and id, as `npm start` prints them. */
  key: string;
  accountId: string;
  adminToken: string;
  admin(path: string, body?: unknown): Promise<Answer>;
  /** Starts the process again on the same data directory and port (after a kill). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startFaultGateway(
  extra: Record<string, string> = {},
  options: { dataDir?: string } = {},
): Promise<FaultGateway> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'gw-fault-')));
  const adminToken = `gw-admin-${randomBytes(16).toString('hex')}`;
  const env: Record<string, string> = {
    GATEWAY_DATA_DIR: dataDir,
    PORT: String(await freePort()),
    DATABASE_URL: '',
    REDIS_URL: '',
    GATEWAY_ADMIN_TOKEN: adminToken,
    GATEWAY_DEMO_CREDIT_CENTS: '1000000',
    ...extra,
  };
  let server = await spawnServer(env);
  const key = server.stdout.find((line) => line.startsWith('sk-gw-')) ?? '';
  const accountId = /Demo account (acct_\w+)/.exec(server.stderr())?.[1] ?? '';
  const gateway: FaultGateway = {
    get server() {
      return server;
    },
    get url() {
      return server.url;
    },
    env,
    dataDir,
    key,
    accountId,
    adminToken,
    admin: (path, body) =>
      send(server.url, {
        method: 'POST',
        path: `/admin${path}`,
        headers: {
          authorization: `Bearer ${adminToken}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    async restart() {
      server = await spawnServer(env);
    },
    async stop() {
      if (server.child.exitCode === null && server.child.signalCode === null) {
        server.child.kill('SIGTERM');
        const timer = setTimeout(() => server.child.kill('SIGKILL'), 20_000);
        await server.exited;
        clearTimeout(timer);
      }
      if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
  // The suite sends far more than the default 600 requests a minute; 429s are not what it measures.
  if (accountId) await gateway.admin(`/accounts/${accountId}/settings`, { rate_limit_rpm: 1_000_000 });
  return gateway;
}

export interface Sent {
  method: string;
  /** Sent as given: invalid percent-encodings and over-long paths reach the server untouched. */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  timeoutMs?: number;
  /** A pool of one's own (the shared one keeps at most 64 sockets open). */
  agent?: Agent;
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The parsed body; undefined when it is not JSON. */
  json: unknown;
  ms: number;
}

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

/** One request over plain node:http, which sends bytes and headers as given (fetch would normalise them). */
export function send(base: string, sent: Sent): Promise<Answer> {
  const started = performance.now();
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const body = sent.body === undefined ? undefined : Buffer.from(sent.body);
    const headers: Record<string, string> = { ...sent.headers };
    if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-length'))
      headers['content-length'] = String(body.length);
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method: sent.method,
        path: sent.path,
        headers,
        agent: sent.agent ?? agent,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text,
            json,
            ms: performance.now() - started,
          });
        });
      },
    );
    req.setTimeout(sent.timeoutMs ?? 30_000, () => req.destroy(new Error(`no answer in ${sent.timeoutMs}`)));
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Why an error answer is not in the API's `{error:{message,type,code}}` shape, or undefined when it is. Anthropic's
 * Messages routes answer in Anthropic's own shape (`{type:'error', error:{type,message}}`) on purpose, for its SDK.
 */
export function shapeProblem(
  answer: Answer,
  format: 'openai' | 'anthropic' | 'jsonrpc' = 'openai',
): string | undefined {
  if (answer.status < 400) return undefined;
  if (answer.text === '') return 'an empty error body';
  if (format === 'jsonrpc') {
    // The MCP endpoint answers in its protocol's shape: a JSON-RPC error object.
    const rpc = answer.json as
      | { jsonrpc?: unknown; error?: { code?: unknown; message?: unknown } }
      | undefined;
    const ok =
      rpc?.jsonrpc === '2.0' && typeof rpc.error?.code === 'number' && typeof rpc.error.message === 'string';
    return ok ? undefined : `not a JSON-RPC error: ${answer.text.slice(0, 200)}`;
  }
  const body = answer.json as { type?: unknown; error?: Record<string, unknown> } | undefined;
  const error = body?.error;
  if (!error) return `not the error shape: ${answer.text.slice(0, 200)}`;
  if (typeof error.message !== 'string' || typeof error.type !== 'string')
    return `error without message or type: ${answer.text.slice(0, 200)}`;
  if (format === 'anthropic') return body?.type === 'error' ? undefined : `not Anthropic's error shape`;
  if (error.code !== answer.status) return `error.code ${String(error.code)} for status ${answer.status}`;
  return undefined;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

/** Runs `work` over the items with at most `lanes` at a time. */
export async function inLanes<T>(items: T[], lanes: number, work: (item: T, i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < items.length) {
        const i = next++;
        await work(items[i] as T, i);
      }
    }),
  );
}

export const round = (n: number) => Math.round(n * 10) / 10;
