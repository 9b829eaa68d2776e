import type { FastifyInstance, FastifyRequest } from 'fastify';
import { monthOf } from '../../../events/budget.ts';
import { subAccountSpending } from '../../../projections/usage/index.ts';
import { periodSpending } from '../../accounts/spend-period.ts';
import { type CsvCell, csvNumber, toCsv } from '../../audit/csv.ts';
import { nanosToUsd } from '../../audit/decimal.ts';
import { RequestRefused } from '../../contracts/errors.ts';
import { cents, type Html, html, money, usd } from '../html.ts';
import type { DashboardContext } from '../index.ts';
import type { Viewer } from '../layout.ts';
import {
  balanceOf,
  type DailySeries,
  dailySpend,
  monthSpend,
  type Scope,
  type SpendGroup,
  type SpendLine,
  spendBy,
} from '../queries.ts';

type KeyViewer = Extract<Viewer, { kind: 'account' }>;

const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;
const PERIOD = { daily: 'day (UTC)', weekly: 'week (UTC)', monthly: 'month (UTC)' } as const;

export function scopeOf(viewer: KeyViewer): Scope {
  return { accountId: viewer.accountId, subAccountId: viewer.subAccountId };
}

export function monthParam(request: FastifyRequest, now: Date): string {
  const month = (request.query as Record<string, unknown>).month;
  if (month === undefined || month === '') return monthOf(now);
  if (typeof month !== 'string' || !MONTH.test(month))
    throw new RequestRefused('invalid', "'month': a month as YYYY-MM");
  return month;
}

const GROUPS: Record<string, { group: SpendGroup; label: string }> = {
  tag: { group: 'tag', label: 'Tag' },
  sub_account: { group: 'sub_account_id', label: 'Sub-account' },
  model: { group: 'model', label: 'Model' },
};

/** What a viewer spent: a sub-account's own view is in its price; the account's, in what the account paid. */
const spentBy = (viewer: KeyViewer) => (line: SpendLine) =>
  BigInt(viewer.subAccountId ? line.price_nanos : line.cost_nanos);

/** The account's view by sub-account shows each customer's price beside its cost, and the margin between. */
const resold = (viewer: KeyViewer, group: SpendGroup) =>
  viewer.subAccountId === null && group === 'sub_account_id';

function card(label: string, value: Html | string, id: string): Html {
  return html`<div class="card" id="${id}"><div class="label">${label}</div><div class="value">${value}</div></div>`;
}

/** Overview and usage: balance, this month's spend, spend per day, alerts; usage by tag, sub-account, model. */
export function accountPages(app: FastifyInstance, ctx: DashboardContext): void {
  const { deps } = ctx;

  app.get('/dashboard', { config: { dashboard: 'key' } }, async (request, reply) => {
    const viewer = ctx.key(request);
    const now = deps.clock();
    const month = monthOf(now);
    const scope = scopeOf(viewer);
    const splitParam = (request.query as Record<string, unknown>).split;
    const split = splitParam === 'model' ? 'model' : 'tag';
    const [spent, daily] = await Promise.all([
      monthSpend(deps.pool, scope, month),
      dailySpend(deps.pool, scope, split, now),
    ]);
    const alerts: Html[] = [];
    let headline: Html;
    if (viewer.subAccountId) {
      const sub = deps.live.subAccount(viewer.subAccountId);
      const cap = sub?.spendCapNanos ?? 0n;
      const holder = deps.live.holder(viewer.keyId);
      // The cap's current period (for life, or the UTC day, week or month it renews by), in the sub-account's price.
      const left = holder ? await deps.subAccounts.capLeft(holder) : 0n;
      const per = sub?.spendCapReset ? ` this ${PERIOD[sub.spendCapReset]}` : '';
      headline = card(`Left of the spend cap${per}`, money(left), 'balance');
      if (left <= 0n)
        alerts.push(html`<div class="alert bad">The spend cap of ${usd(cap)}${per} is reached.</div>`);
      else if (left * 10n < cap)
        alerts.push(
          html`<div class="alert warn">Less than 10% of the spend cap of ${usd(cap)}${per} is left.</div>`,
        );
    } else {
      const balance = BigInt((await balanceOf(deps.pool, viewer.accountId))?.balance_nanos ?? '0');
      const account = deps.live.account(viewer.accountId);
      headline = card('Balance', money(balance), 'balance');
      if (balance <= 0n)
        alerts.push(html`<div class="alert bad">The balance is exhausted: requests are refused until a top-up.
 <a href="/dashboard/billing">Top up</a></div>`);
      else if (account && balance < account.balanceLowThresholdNanos)
        alerts.push(html`<div class="alert warn">Low balance: below ${usd(account.balanceLowThresholdNanos)}.
 <a href="/dashboard/billing">Top up</a></div>`);
      const byTag = await spendBy(deps.pool, scope, month, 'tag');
      for (const [tag, cap] of account?.tagBudgets ?? []) {
        const used = BigInt(byTag.find((line) => line.key === tag)?.cost_nanos ?? '0');
        if (used >= cap)
          alerts.push(
            html`<div class="alert bad">Tag ${tag} has used its budget of ${usd(cap)} this month.</div>`,
          );
        else if (used * 100n >= cap * 80n)
          alerts.push(
            html`<div class="alert warn">Tag ${tag} has used ${usd(used)} of its ${usd(cap)} budget this month.</div>`,
          );
      }
      const subs = deps.live.subAccountsOf(viewer.accountId);
      const periods = await periodSpending(
        deps.pool,
        viewer.accountId,
        subs,
        await subAccountSpending(deps.pool, viewer.accountId),
        now,
      );
      for (const sub of subs) {
        if (sub.spendCapNanos === 0n) continue;
        const used = periods.get(sub.subAccountId)?.spentNanos ?? 0n;
        const per = sub.spendCapReset ? ` this ${PERIOD[sub.spendCapReset]}` : '';
        if (used * 100n >= sub.spendCapNanos * 90n)
          alerts.push(
            html`<div class="alert warn">Sub-account ${sub.name} has spent ${usd(used)} of its ${usd(sub.spendCapNanos)} cap${per}.</div>`,
          );
      }
    }
    const tab = (value: string, label: string) =>
      html`<a href="/dashboard?split=${value}"${split === value ? html` aria-current="true"` : ''}>${label}</a>`;
    return ctx.render(reply, viewer, {
      title: 'Overview',
      section: '/dashboard',
      body: html`<section id="alerts">${alerts.length ? alerts : html`<div class="alert ok">No alerts.</div>`}</section>
<div class="cards">${headline}${card(`Spend in ${month} (UTC)`, money(spent), 'month-spend')}</div>
<div class="panel">
  <h2>Spend per day, last 30 UTC days, by ${split}</h2>
  <div class="tabs">${tab('tag', 'By tag')}${tab('model', 'By model')}</div>
  <div class="chart" data-chart="daily-spend" data-points="${JSON.stringify(daily)}"></div>
  <details><summary>As a table</summary>${dailyTable(daily)}</details>
</div>`,
    });
  });

  app.get('/dashboard/usage', { config: { dashboard: 'key' } }, async (request, reply) => {
    const viewer = ctx.key(request);
    const month = monthParam(request, deps.clock());
    const q = request.query as Record<string, unknown>;
    const by = typeof q.by === 'string' && q.by in GROUPS ? q.by : 'tag';
    const { group, label } = GROUPS[by] as (typeof GROUPS)[string];
    const lines = await spendBy(deps.pool, scopeOf(viewer), month, group);
    const spent = spentBy(viewer);
    const margins = resold(viewer, group);
    const total = lines.reduce(
      (sum, l) => ({ spent: sum.spent + spent(l), price: sum.price + BigInt(l.price_nanos) }),
      { spent: 0n, price: 0n },
    );
    const tabs = Object.entries(GROUPS)
      .filter(([key]) => !(viewer.subAccountId && key === 'sub_account'))
      .map(
        ([key, g]) =>
          html`<a href="/dashboard/usage?month=${month}&amp;by=${key}"${key === by ? html` aria-current="true"` : ''}>By ${g.label.toLowerCase()}</a>`,
      );
    const name = (key: string) => {
      if (key === '')
        return html`<span class="muted">${group === 'sub_account_id' ? '(account keys)' : '(none)'}</span>`;
      if (group !== 'sub_account_id') return key;
      const sub = deps.live.subAccount(key);
      return html`${sub?.name ?? key} <span class="muted">${key}</span>`;
    };
    return ctx.render(reply, viewer, {
      title: 'Usage',
      section: '/dashboard/usage',
      body: html`<form method="get" action="/dashboard/usage" class="row">
  <label>Month (UTC)<input type="month" name="month" value="${month}"></label>
  <input type="hidden" name="by" value="${by}">
  <button type="submit" class="plain">Show</button>
  <a href="/dashboard/usage.csv?month=${month}&amp;by=${by}" hx-boost="false" download>Download CSV</a>
</form>
<div class="tabs">${tabs}</div>
<table id="usage">
<thead><tr><th>${label}</th><th class="num">Requests</th><th class="num">Units</th>${
        margins
          ? html`<th class="num">Price (the customer's)</th><th class="num">Cost (the account's)</th><th class="num">Margin</th>`
          : html`<th class="num">Cost</th>`
      }</tr></thead>
<tbody>${lines.map(
        (l) =>
          html`<tr${margins ? html` data-sub-account-id="${l.key}"` : ''}><td>${name(l.key)}</td><td class="num">${l.requests}</td><td class="num">${l.units}</td>${
            margins
              ? html`<td class="num price">${money(l.price_nanos)}</td><td class="num cost">${money(l.cost_nanos)}</td><td class="num margin">${money(BigInt(l.price_nanos) - spent(l))}</td>`
              : html`<td class="num">${money(spent(l))}</td>`
          }</tr>`,
      )}</tbody>
<tfoot><tr><th>Total</th><th></th><th></th>${
        margins
          ? html`<th class="num">${money(total.price)}</th><th class="num">${money(total.spent)}</th><th class="num">${money(total.price - total.spent)}</th>`
          : html`<th class="num">${money(total.spent)}</th>`
      }</tr></tfoot>
</table>
${lines.length === 0 ? html`<p class="muted">No charges in ${month}.</p>` : ''}`,
    });
  });

  app.get('/dashboard/usage.csv', { config: { dashboard: 'key' } }, async (request, reply) => {
    const viewer = ctx.key(request);
    const month = monthParam(request, deps.clock());
    const q = request.query as Record<string, unknown>;
    const by = typeof q.by === 'string' && q.by in GROUPS ? q.by : 'tag';
    const { group } = GROUPS[by] as (typeof GROUPS)[string];
    const lines = await spendBy(deps.pool, scopeOf(viewer), month, group);
    const spent = spentBy(viewer);
    const margins = resold(viewer, group);
    // Exact to the nano-dollar (nine places), for spreadsheets.
    const amount = (nanos: bigint) => [csvNumber(nanos), csvNumber(nanosToUsd(nanos))];
    const rows: CsvCell[][] = [
      [
        'month',
        by,
        'requests',
        'units',
        'cost_nanos',
        'cost_usd',
        ...(margins ? ['price_nanos', 'price_usd', 'margin_nanos', 'margin_usd'] : []),
      ],
      ...lines.map((l) => [
        month,
        l.key,
        csvNumber(l.requests),
        csvNumber(l.units),
        ...amount(spent(l)),
        ...(margins ? [...amount(BigInt(l.price_nanos)), ...amount(BigInt(l.price_nanos) - spent(l))] : []),
      ]),
    ];
    reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="usage-${month}-by-${by}.csv"`);
    return toCsv(rows);
  });
}

function dailyTable(daily: DailySeries): Html {
  return html`<table><thead><tr><th>Day (UTC)</th>${daily.series.map((s) => html`<th class="num">${s.label}</th>`)}</tr></thead>
<tbody>${daily.days.map(
    (day, i) =>
      html`<tr><td>${new Date(day * 1000).toISOString().slice(0, 10)}</td>${daily.series.map(
        (s) => html`<td class="num">${cents(s.nanos[i] ?? '0')}</td>`,
      )}</tr>`,
  )}</tbody></table>`;
}
