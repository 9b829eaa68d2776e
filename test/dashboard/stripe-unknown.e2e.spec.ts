import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { dropSchema } from '../support/database.ts';
import { eventually } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { type ServerProcess, spawnServer } from '../support/server-process.ts';
import { type StripeSimulator, startStripeSimulator } from '../upstreams/stripe.ts';

// A signed Stripe event about something that does not exist (a session or charge Stripe has not, an account this
// gateway has not: one Stripe account's events reach every endpoint it has) is acknowledged and logged, credits
// nothing, and is not delivered again for days. A database that cannot be reached is still a failure Stripe retries.
// The gateway runs as its own process, so that its log is read as an operator reads it, over a TCP proxy to
// PostgreSQL that the test can take away.

const SECRET = 'whsec_test_unknown';
const ADMIN = `gw-admin-${randomBytes(16).toString('hex')}`;
let stripe: StripeSimulator;
let proxy: DatabaseProxy;
let gateway: ServerProcess;
let schema: string;
let dataDir: string;
let accountId: string;
let key: string;

interface DatabaseProxy {
  url: string;
  /** Cuts every connection and refuses new ones, as a database that went away. */
  away(): void;
  back(): void;
  close(): Promise<void>;
}

async function startDatabaseProxy(databaseUrl: string): Promise<DatabaseProxy> {
  const target = new URL(databaseUrl);
  const sockets = new Set<Socket>();
  let gone = false;
  const server: Server = createServer((client) => {
    if (gone) {
      client.destroy();
      return;
    }
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as { port: number }).port);
  return {
    url: url.toString(),
    away() {
      gone = true;
      for (const socket of sockets) socket.destroy();
    },
    back() {
      gone = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

const deliver = (payload: string) =>
  fetch(`${gateway.url}/webhooks/stripe`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'stripe-signature': stripe.sign(payload, SECRET) },
    body: payload,
  });

async function paidSession(cents: number, client: string): Promise<string> {
  const created = await json(
    await fetch(`${stripe.url}/v1/checkout/sessions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk_test_x', 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        mode: 'payment',
        client_reference_id: client,
        'line_items[0][quantity]': '1',
        'line_items[0][price_data][currency]': 'usd',
        'line_items[0][price_data][unit_amount]': String(cents),
        success_url: 'http://127.0.0.1/ok',
      }).toString(),
    }),
  );
  await fetch(`${stripe.url}/pay/${created.id}`, { method: 'POST', redirect: 'manual' });
  return created.id;
}

/** The gateway's JSON log lines at warning level or above. */
const warnings = () =>
  gateway.stdout
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => (line.level as number) >= 40);

const balanceCents = async () =>
  (await json(await fetch(`${gateway.url}/v1/balance`, { headers: { authorization: `Bearer ${key}` } })))
    .cents;

beforeAll(async () => {
  stripe = await startStripeSimulator();
  proxy = await startDatabaseProxy(inject('databaseUrl'));
  schema = `stripe_${randomBytes(5).toString('hex')}`;
  dataDir = await mkdtemp(join(tmpdir(), 'gw-stripe-'));
  gateway = await spawnServer({
    DATABASE_URL: proxy.url,
    GATEWAY_DB_SCHEMA: schema,
    GATEWAY_DATA_DIR: dataDir,
    GATEWAY_ADMIN_TOKEN: ADMIN,
    PORT: '0',
    STRIPE_SECRET_KEY: 'sk_test_x',
    STRIPE_WEBHOOK_SECRET: SECRET,
    STRIPE_API_BASE: stripe.url,
  });
  const account = await json(
    await fetch(`${gateway.url}/admin/accounts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Card' }),
    }),
  );
  accountId = account.account_id;
  key = account.key;
});
afterAll(async () => {
  proxy?.back();
  gateway?.signal('SIGTERM');
  await gateway?.exited;
  await proxy?.close();
  await stripe?.close();
  if (schema) await dropSchema(schema);
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('a Stripe event about something that does not exist', () => {
  it('is acknowledged and logged with the session id, crediting nothing, when Stripe has no such session', async () => {
    // The event's own copy names this account and an amount; only Stripe's answer counts, and it has no session.
    const sessionId = `cs_test_${randomBytes(12).toString('hex')}`;
    const event = stripe.event('checkout.session.completed', {
      id: sessionId,
      object: 'checkout.session',
      mode: 'payment',
      payment_status: 'paid',
      currency: 'usd',
      amount_total: 5000,
      client_reference_id: accountId,
    });
    for (let delivery = 0; delivery < 2; delivery++) {
      const answer = await deliver(event);
      expect(answer.status).toBe(200);
      expect(await json(answer)).toMatchObject({
        received: true,
        handled: 'ignored',
        unknown: { sessionId },
      });
    }
    const logged = await eventually(
      async () => warnings().filter((line) => line.sessionId === sessionId),
      (lines) => lines.length === 2,
      3000,
    );
    expect(logged).toHaveLength(2);
    expect(logged[0]?.msg).toContain('nothing credited');
    expect(await balanceCents()).toBe(0);
  });

  it('is acknowledged and logged when the session names an account this gateway does not have', async () => {
    const sessionId = await paidSession(2500, 'acct_of_another_gateway');
    const answer = await deliver(stripe.event('checkout.session.completed', stripe.sessions.get(sessionId)));
    expect(answer.status).toBe(200);
    expect(await json(answer)).toMatchObject({
      handled: 'ignored',
      unknown: { sessionId, accountId: 'acct_of_another_gateway' },
    });
    await eventually(
      async () => warnings().filter((line) => line.sessionId === sessionId),
      (lines) => lines.length === 1,
      3000,
    );
    expect(warnings().some((line) => line.accountId === 'acct_of_another_gateway')).toBe(true);
  });

  it('is acknowledged and logged when a refund names a charge Stripe has not', async () => {
    const chargeId = `ch_test_${randomBytes(12).toString('hex')}`;
    const answer = await deliver(
      stripe.event('charge.refunded', { id: chargeId, object: 'charge', amount_refunded: 100 }),
    );
    expect(answer.status).toBe(200);
    expect(await json(answer)).toMatchObject({ handled: 'ignored', unknown: { chargeId } });
    await eventually(
      async () => warnings().filter((line) => line.chargeId === chargeId),
      (lines) => lines.length === 1,
      3000,
    );
  });
});

describe('a Stripe event while the database is away', () => {
  it('is refused with a status Stripe retries, and credited once when it comes again', async () => {
    const sessionId = await paidSession(1200, accountId);
    const event = stripe.event('checkout.session.completed', stripe.sessions.get(sessionId));
    proxy.away();
    const refused = await deliver(event);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('2');
    proxy.back();
    const again = await eventually(
      () => deliver(event),
      (answer) => answer.status === 200,
      15_000,
    );
    expect(again.status).toBe(200);
    expect(await json(again)).toMatchObject({ handled: 'credited', reference: sessionId });
    // The balance is a read model, which follows the log within moments; 1200 and no more: the events above credited
    // nothing (the first one's own copy named this account and $50).
    expect(await eventually(balanceCents, (cents) => cents === 1200, 5000)).toBe(1200);
  });
});
