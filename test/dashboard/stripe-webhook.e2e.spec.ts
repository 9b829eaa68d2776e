import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountStream } from '../../events/account.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { type StripeSimulator, startStripeSimulator } from '../upstreams/stripe.ts';

// Two gateways over one store: a top-up's webhook delivered to both, many times at once, credits once. What
// stops the second credit is the account's stream (its decider and the top-up's event id), not either process's
// memory. No browser: the browser test covers the pages.

const SECRET = 'whsec_test_two_instances';
let stripe: StripeSimulator;
let first: TestGateway;
let second: TestGateway;
let accountId: string;
let key: string;

async function paidSession(cents: number): Promise<string> {
  const created = await json(
    await fetch(`${stripe.url}/v1/checkout/sessions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk_test_x', 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        mode: 'payment',
        client_reference_id: accountId,
        'line_items[0][quantity]': '1',
        'line_items[0][price_data][currency]': 'usd',
        'line_items[0][price_data][unit_amount]': String(cents),
        'line_items[0][price_data][product_data][name]': 'credit',
        success_url: 'http://127.0.0.1/ok',
      }).toString(),
    }),
  );
  await fetch(`${stripe.url}/pay/${created.id}`, { method: 'POST', redirect: 'manual' });
  return created.id;
}

const deliver = (gateway: TestGateway, payload: string) =>
  fetch(`${gateway.url}/webhooks/stripe`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'stripe-signature': stripe.sign(payload, SECRET) },
    body: payload,
  });

beforeAll(async () => {
  stripe = await startStripeSimulator();
  const env = { STRIPE_SECRET_KEY: 'sk_test_x', STRIPE_WEBHOOK_SECRET: SECRET, STRIPE_API_BASE: stripe.url };
  first = await startTestGateway(env);
  second = await startTestGateway(env, { schema: first.env.GATEWAY_DB_SCHEMA });
  ({ account_id: accountId, key } = await json(await first.admin('/accounts', { name: 'Twice' })));
});
afterAll(async () => {
  await second?.close();
  await first?.close();
  await stripe?.close();
});

describe('the Stripe webhook on two instances', () => {
  it('credits a paid session once, whichever instance gets which delivery, however many at once', async () => {
    const sessionId = await paidSession(1234);
    const completed = stripe.event('checkout.session.completed', stripe.sessions.get(sessionId));
    const succeeded = stripe.event(
      'checkout.session.async_payment_succeeded',
      stripe.sessions.get(sessionId),
    );
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => deliver(i % 2 ? first : second, i % 3 ? completed : succeeded)),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(12).fill(200));
    const handled = await Promise.all(answers.map(async (a) => (await json(a)).handled));
    expect(handled.filter((h) => h === 'credited')).toHaveLength(1);
    const stream = await first.runtime.store.readStream(accountStream(accountId), {
      fromRevision: 0,
      maxCount: 100,
    });
    expect(stream.filter((e) => e.type === 'AccountToppedUp')).toHaveLength(1);
    const balance = () =>
      fetch(`${second.url}/v1/balance`, { headers: { authorization: `Bearer ${key}` } }).then(json);
    expect((await eventually(balance, (b) => b.cents === 1234, 5000)).cents).toBe(1234);
  });

  it('ignores a completed session that is not paid yet, and credits it when its payment succeeds', async () => {
    const created = await json(
      await fetch(`${stripe.url}/v1/checkout/sessions`, {
        method: 'POST',
        headers: { authorization: 'Bearer sk_test_x', 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          mode: 'payment',
          client_reference_id: accountId,
          'line_items[0][price_data][currency]': 'usd',
          'line_items[0][price_data][unit_amount]': '700',
          success_url: 'http://127.0.0.1/ok',
        }).toString(),
      }),
    );
    const unpaid = stripe.event('checkout.session.completed', created);
    expect(await json(await deliver(first, unpaid))).toMatchObject({ handled: 'ignored' });
    await fetch(`${stripe.url}/pay/${created.id}`, { method: 'POST', redirect: 'manual' });
    const succeeded = stripe.event(
      'checkout.session.async_payment_succeeded',
      stripe.sessions.get(created.id),
    );
    expect(await json(await deliver(second, succeeded))).toMatchObject({
      handled: 'credited',
      reference: created.id,
    });
  });
});
