import type { FastifyInstance, FastifyRequest } from 'fastify';
import { RequestRefused } from '../../contracts/errors.ts';
import { dollarsToCents, TOP_UP_MAX_CENTS, TOP_UP_MIN_CENTS } from '../../payments/stripe.ts';
import { cents, html, money, time } from '../html.ts';
import type { DashboardContext } from '../index.ts';
import { csrfField } from '../layout.ts';
import { balanceOf, moneyIn, recentCharges } from '../queries.ts';

/** Billing: the balance, top-ups and refunds, charges, and a card top-up through Stripe Checkout. */
export function billingPages(app: FastifyInstance, ctx: DashboardContext): void {
  const { deps } = ctx;
  const origin = (request: FastifyRequest) =>
    (deps.env.GATEWAY_URL || `${request.protocol}://${request.headers.host ?? 'localhost'}`).replace(
      /\/$/,
      '',
    );

  app.get('/dashboard/billing', { config: { dashboard: 'main' } }, async (request, reply) => {
    const viewer = ctx.main(request);
    const [balance, topUps, charges] = await Promise.all([
      balanceOf(deps.pool, viewer.accountId),
      moneyIn(deps.pool, viewer.accountId),
      recentCharges(deps.pool, viewer.accountId),
    ]);
    const checkout = (request.query as Record<string, unknown>).checkout;
    const bounds = `between $${TOP_UP_MIN_CENTS / 100} and $${(TOP_UP_MAX_CENTS / 100).toLocaleString('en-US')}`;
    const topUpForm = deps.cardTopUps.configured
      ? html`<form method="post" action="/dashboard/billing/top-up" class="row" id="top-up" hx-boost="false">${csrfField(viewer)}
  <label>Amount in US dollars, ${bounds}<input name="amount" required inputmode="decimal" placeholder="25.00"></label>
  <button type="submit">Top up by card</button>
</form>
<p class="muted">Payment is taken by Stripe; the balance is credited when Stripe confirms it (usually within seconds).</p>`
      : html`<div class="alert warn" id="stripe-not-configured">Card top-ups are not configured on this gateway. The operator sets
<code>STRIPE_SECRET_KEY</code> and <code>STRIPE_WEBHOOK_SECRET</code> and points a Stripe webhook endpoint at
<code>${origin(request)}/webhooks/stripe</code> for <code>checkout.session.completed</code>,
<code>checkout.session.async_payment_succeeded</code> and <code>charge.refunded</code>. Until then the operator
credits the account with <code>gateway topup ${viewer.accountId} --cents N --reference R</code>.</div>`;
    return ctx.render(reply, viewer, {
      title: 'Billing',
      section: '/dashboard/billing',
      body: html`${checkout === 'success' ? html`<div class="alert ok">Payment received by Stripe: the balance is credited as soon as Stripe confirms it.</div>` : ''}
${checkout === 'cancelled' ? html`<div class="alert warn">The payment was cancelled; nothing was charged.</div>` : ''}
<div class="cards">
  <div class="card" id="balance"><div class="label">Balance</div><div class="value">${money(balance?.balance_nanos ?? '0')}</div></div>
  <div class="card"><div class="label">Topped up (net of refunds)</div><div class="value">${money(balance?.topped_up_nanos ?? '0')}</div></div>
  ${(balance?.adjusted_nanos ?? '0') === '0' ? '' : html`<div class="card" id="adjusted"><div class="label">Adjustments</div><div class="value">${money(balance?.adjusted_nanos ?? '0')}</div></div>`}
  <div class="card"><div class="label">Charged</div><div class="value">${money(balance?.charged_nanos ?? '0')}</div></div>
</div>
<h2>Top up</h2>
${topUpForm}
<h2>Top-ups, refunds and adjustments</h2>
<table id="top-ups"><thead><tr><th>Time</th><th>Kind</th><th>Reference</th><th class="num">Amount</th></tr></thead>
<tbody>${topUps.map((t) => html`<tr><td>${time(t.occurred_at)}</td><td>${t.kind}</td><td><code>${t.reference}</code></td><td class="num">${money(t.amount_nanos)}</td></tr>`)}</tbody></table>
<h2>Latest charges</h2>
<table id="charges"><thead><tr><th>Time</th><th>Request</th><th>Model</th><th>Tag</th><th>Sub-account</th><th class="num">Charged</th></tr></thead>
<tbody>${charges.map(
        (
          c,
        ) => html`<tr><td>${time(c.occurred_at)}</td><td><a href="/dashboard/requests/${encodeURIComponent(c.request_id)}">${c.request_id}</a>${c.kind === 'overrun' ? ' (overrun)' : ''}</td>
<td>${c.model ?? ''}</td><td>${c.tag ?? ''}</td><td>${c.sub_account_id ?? ''}</td><td class="num">${cents(c.charged_nanos)}</td></tr>`,
      )}</tbody></table>`,
    });
  });

  app.post('/dashboard/billing/top-up', { config: { dashboard: 'main' } }, async (request, reply) => {
    const viewer = ctx.main(request);
    const typed = (request.body as Record<string, unknown> | undefined)?.amount;
    const amount = typeof typed === 'string' ? dollarsToCents(typed) : undefined;
    if (amount === undefined)
      throw new RequestRefused('invalid', "'amount': an amount in US dollars, such as 25 or 12.50");
    const base = origin(request);
    const session = await deps.cardTopUps.startCheckout(viewer.accountId, amount, {
      success: `${base}/dashboard/billing?checkout=success&session_id={CHECKOUT_SESSION_ID}`,
      cancel: `${base}/dashboard/billing?checkout=cancelled`,
    });
    return reply.redirect(session.url, 303);
  });
}
