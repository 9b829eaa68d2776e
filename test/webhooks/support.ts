import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { StoredEvent } from '../../events/envelope.ts';
import { webhookStream } from '../../events/webhook.ts';
import type { DeliveryRow } from '../../projections/webhook-deliveries/queries.ts';
import { verifySignature } from '../../src/webhooks/signing.ts';
import type { TestGateway } from '../support/gateway.ts';

export interface Received {
  headers: IncomingHttpHeaders;
  /** The raw body, exactly as sent. */
  body: string;
  method: string;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** The status (and headers) answered to the n-th request (1-based); 200 unless set. */
  answer: (n: number) => { status: number; headers?: Record<string, string> };
  close(): Promise<void>;
}

/** A webhook receiver on 127.0.0.1 that records every request with its raw body. */
export async function startReceiver(answer: Receiver['answer'] = () => ({ status: 200 })): Promise<Receiver> {
  const receiver: Receiver = { url: '', received: [], answer, close: async () => {} };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      receiver.received.push({
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        method: req.method ?? '',
      });
      const { status, headers } = receiver.answer(receiver.received.length);
      res.writeHead(status, headers).end(status < 300 ? 'ok' : 'no');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  receiver.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

/** A clock the test moves by hand. */
export function manualClock(start: Date) {
  let now = start.getTime();
  return {
    now: () => new Date(now),
    set(offsetMs: number) {
      now = start.getTime() + offsetMs;
    },
  };
}

export async function until<T>(
  probe: () => Promise<T> | T,
  accept: (v: T) => boolean,
  ms = 5000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function api(
  gateway: TestGateway,
  key: string,
  path: string,
  init: { method?: string; body?: unknown } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${gateway.url}/v1${path}`, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: {
      authorization: `Bearer ${key}`,
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

export async function adminPost(url: string, token: string, path: string, body?: unknown) {
  const response = await fetch(`${url}/admin${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** An account with its first key, opened through the admin API. */
export async function openAccount(url: string, token: string) {
  const { body } = await adminPost(url, token, '/accounts', { name: 'Hooks Inc' });
  return body as { account_id: string; key: string; key_id: string };
}

export async function deliveryEvents(gateway: TestGateway, deliveryId: string): Promise<StoredEvent[]> {
  return gateway.runtime.store.readStream(webhookStream(deliveryId));
}

/** Waits until the delivery's read-model row has `attempts` recorded with an outcome (not in flight). */
export async function settledAttempt(
  gateway: TestGateway,
  source: string,
  attempts: number,
): Promise<DeliveryRow> {
  return until(
    async () => gateway.runtime.webhooks.statusOf(source),
    (row) => row !== undefined && row.attempts === attempts && row.status !== 'attempting',
  ) as Promise<DeliveryRow>;
}

/** Checks what a receiver must check: the signature over `<t>.<raw body>` with the key's secret. */
export function signedWith(secret: string, request: Received | undefined, nowSeconds: number): boolean {
  if (!request) return false;
  return (
    verifySignature(secret, request.body, request.headers['x-gw-signature'] as string, nowSeconds) === 'valid'
  );
}
