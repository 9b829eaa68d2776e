import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The part of Stripe's API a card top-up uses, as https://docs.stripe.com/api documents it: form-encoded requests
 * (`line_items[0][price_data][unit_amount]=2500`) with `Authorization: Bearer sk_…`, JSON answers, errors as
 * `{error: {type, message, param?}}`.
 *
 * - `POST /v1/checkout/sessions` → a `checkout.session` (`payment_status: "unpaid"`, `url` to its checkout page)
 * - `GET /v1/checkout/sessions/{id}`, `GET /v1/checkout/sessions?payment_intent=pi_…` (a list)
 * - `GET /v1/charges/{id}`
 *
 * The hosted checkout page is `GET /pay/{id}`; its form (`POST /pay/{id}`) pays the session (a payment intent and a
 * charge are made) and redirects to `success_url`. Webhooks are not sent: the test builds the event (`event`) and
 * its `Stripe-Signature` (`sign`: `t=<unix>,v1=<HMAC-SHA256(secret, "<t>.<payload>")>`) and posts them itself.
 */
export interface StripeSimulator {
  url: string;
  /** Every `POST /v1/checkout/sessions`, its form fields as sent (bracketed names kept). */
  created: Record<string, string>[];
  sessions: Map<string, Session>;
  charges: Map<string, Charge>;
  /** An event as Stripe delivers it, for the object given. */
  event(type: string, object: unknown): string;
  sign(payload: string, secret: string, timestamp?: number): string;
  /** Refunds part or all of a paid session's charge (`amount_refunded` grows); the charge. */
  refund(sessionId: string, cents: number): Charge;
  close(): Promise<void>;
}

interface Session {
  id: string;
  object: 'checkout.session';
  mode: string;
  amount_total: number;
  amount_subtotal: number;
  currency: string;
  client_reference_id: string | null;
  metadata: Record<string, string>;
  payment_status: 'unpaid' | 'paid';
  status: 'open' | 'complete';
  payment_intent: string | null;
  success_url: string;
  cancel_url: string | null;
  url: string | null;
  created: number;
  livemode: false;
}

interface Charge {
  id: string;
  object: 'charge';
  amount: number;
  amount_refunded: number;
  refunded: boolean;
  currency: string;
  payment_intent: string;
  paid: true;
  status: 'succeeded';
  created: number;
  livemode: false;
}

const id = (prefix: string) => `${prefix}_test_${randomBytes(12).toString('hex')}`;

export async function startStripeSimulator(): Promise<StripeSimulator> {
  const created: Record<string, string>[] = [];
  const sessions = new Map<string, Session>();
  const charges = new Map<string, Charge>();
  let base = '';

  const server = createServer((req, res) => {
    res.on('error', () => {});
    serve(req, res).catch(() => res.destroy());
  });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? '/', base);
    const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
    const path = url.pathname;

    if (path.startsWith('/pay/')) return checkoutPage(req.method ?? 'GET', path.slice(5), res);
    if (!/^Bearer sk_(test|live)_\S+$/.test(req.headers.authorization ?? ''))
      return json(res, 401, error('invalid_request_error', 'Invalid API Key provided'));

    if (req.method === 'POST' && path === '/v1/checkout/sessions') {
      created.push(form);
      if (form.mode !== 'payment')
        return json(res, 400, error('invalid_request_error', 'Invalid mode', 'mode'));
      if (!form.success_url)
        return json(
          res,
          400,
          error('invalid_request_error', 'Missing required param: success_url.', 'success_url'),
        );
      const amount = Number(form['line_items[0][price_data][unit_amount]']);
      const quantity = Number(form['line_items[0][quantity]'] ?? '1');
      const currency = form['line_items[0][price_data][currency]'];
      if (!Number.isInteger(amount) || amount < 50 || !currency)
        return json(res, 400, error('invalid_request_error', 'Invalid line_items', 'line_items'));
      const metadata = Object.fromEntries(
        Object.entries(form)
          .filter(([k]) => /^metadata\[[^\]]+\]$/.test(k))
          .map(([k, v]) => [k.slice(9, -1), v]),
      );
      const session: Session = {
        id: id('cs'),
        object: 'checkout.session',
        mode: form.mode,
        amount_total: amount * quantity,
        amount_subtotal: amount * quantity,
        currency,
        client_reference_id: form.client_reference_id ?? null,
        metadata,
        payment_status: 'unpaid',
        status: 'open',
        payment_intent: null,
        success_url: form.success_url,
        cancel_url: form.cancel_url ?? null,
        url: null,
        created: Math.floor(Date.now() / 1000),
        livemode: false,
      };
      session.url = `${base}/pay/${session.id}`;
      sessions.set(session.id, session);
      return json(res, 200, session);
    }
    if (req.method === 'GET' && path === '/v1/checkout/sessions') {
      const intent = url.searchParams.get('payment_intent');
      const data = [...sessions.values()].filter((s) => intent === null || s.payment_intent === intent);
      return json(res, 200, { object: 'list', data, has_more: false, url: '/v1/checkout/sessions' });
    }
    const session = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(path);
    if (req.method === 'GET' && session) {
      const found = sessions.get(decodeURIComponent(session[1] as string));
      return found
        ? json(res, 200, found)
        : json(res, 404, missing('checkout session', session[1] as string));
    }
    const charge = /^\/v1\/charges\/([^/]+)$/.exec(path);
    if (req.method === 'GET' && charge) {
      const found = charges.get(decodeURIComponent(charge[1] as string));
      return found ? json(res, 200, found) : json(res, 404, missing('charge', charge[1] as string));
    }
    return json(
      res,
      404,
      error('invalid_request_error', `Unrecognized request URL (${req.method}: ${path})`),
    );
  }

  function checkoutPage(method: string, sessionId: string, res: ServerResponse): void {
    const session = sessions.get(sessionId);
    if (!session) {
      json(res, 404, missing('checkout session', sessionId));
      return;
    }
    if (method === 'POST') {
      if (session.payment_status !== 'paid') {
        const intent = id('pi');
        const charge: Charge = {
          id: id('ch'),
          object: 'charge',
          amount: session.amount_total,
          amount_refunded: 0,
          refunded: false,
          currency: session.currency,
          payment_intent: intent,
          paid: true,
          status: 'succeeded',
          created: Math.floor(Date.now() / 1000),
          livemode: false,
        };
        charges.set(charge.id, charge);
        Object.assign(session, { payment_status: 'paid', status: 'complete', payment_intent: intent });
      }
      res.writeHead(303, { location: session.success_url.replace('{CHECKOUT_SESSION_ID}', session.id) });
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html><head><title>Checkout (simulated Stripe)</title></head><body>
<h1>Pay ${(session.amount_total / 100).toFixed(2)} ${session.currency.toUpperCase()}</h1>
<p id="amount">${session.amount_total}</p>
<form method="post" action="/pay/${session.id}"><button type="submit" id="pay">Pay</button></form></body></html>`);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: base,
    created,
    sessions,
    charges,
    event(type, object) {
      return JSON.stringify({
        id: id('evt'),
        object: 'event',
        api_version: '2025-01-27.acacia',
        created: Math.floor(Date.now() / 1000),
        type,
        livemode: false,
        pending_webhooks: 1,
        request: { id: null, idempotency_key: null },
        data: { object },
      });
    },
    sign(payload, secret, timestamp = Math.floor(Date.now() / 1000)) {
      const signature = createHmac('sha256', secret).update(`${timestamp}.${payload}`).digest('hex');
      return `t=${timestamp},v1=${signature}`;
    },
    refund(sessionId, cents) {
      const session = sessions.get(sessionId);
      const charge = [...charges.values()].find((c) => c.payment_intent === session?.payment_intent);
      if (!charge) throw new Error(`session ${sessionId} has no charge`);
      charge.amount_refunded = Math.min(charge.amount, charge.amount_refunded + cents);
      charge.refunded = charge.amount_refunded === charge.amount;
      return charge;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const error = (type: string, message: string, param?: string) => ({
  error: { type, message, ...(param && { param }) },
});
const missing = (what: string, given: string) => ({
  error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such ${what}: '${given}'` },
});

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': id('req') });
  res.end(JSON.stringify(body));
}
