import type { FastifyInstance } from 'fastify';
import { listReconciliations } from '../../../projections/reconciliations/index.ts';
import { runAudit } from '../../audit/audit.ts';
import { latestAuditReport } from '../../audit/reports.ts';
import { projectionStatus } from '../../projections/status.ts';
import { html, money, time } from '../html.ts';
import type { DashboardContext } from '../index.ts';
import { csrfField } from '../layout.ts';
import { balances, latestTopUps } from '../queries.ts';

/** The operator's view: accounts and balances, top-ups, the projections' lag, the reconciliations, and the audit. */
export function adminPages(app: FastifyInstance, ctx: DashboardContext): void {
  const { deps } = ctx;
  let running: Promise<unknown> | undefined;

  app.get('/dashboard/admin', { config: { dashboard: 'admin' } }, async (request, reply) => {
    const [rows, topUps, projections, latest, reconciled] = await Promise.all([
      balances(deps.pool),
      latestTopUps(deps.pool, 30),
      projectionStatus(deps.pool, deps.store, deps.projections),
      latestAuditReport(deps.pool),
      listReconciliations(deps.pool, { limit: 30 }),
    ]);
    const byId = new Map(rows.map((r) => [r.account_id, r]));
    const accounts = deps.live
      .accountIds()
      .map((id) => ({ id, live: deps.live.account(id), row: byId.get(id) }));
    return ctx.render(reply, request.viewer, {
      title: 'Operator',
      section: '/dashboard/admin',
      body: html`<h2>Accounts</h2>
<table id="accounts"><thead><tr><th>Account</th><th>Name</th><th>Opened</th><th class="num">Sub-accounts</th><th class="num">Top-ups</th><th class="num">Topped up</th><th class="num">Charged</th><th class="num">Balance</th></tr></thead>
<tbody>${accounts.map(
        (a) => html`<tr><td>${a.id}</td><td>${a.live?.name ?? ''}</td><td>${time(a.live?.openedAt)}</td>
<td class="num">${deps.live.subAccountsOf(a.id).filter((s) => !s.deleted).length}</td><td class="num">${a.row?.top_up_count ?? 0}</td>
<td class="num">${money(a.row?.topped_up_nanos ?? '0')}</td><td class="num">${money(a.row?.charged_nanos ?? '0')}</td><td class="num">${money(a.row?.balance_nanos ?? '0')}</td></tr>`,
      )}</tbody></table>
<h2>Latest top-ups</h2>
<table id="admin-top-ups"><thead><tr><th>Time</th><th>Account</th><th>Reference</th><th class="num">Amount</th></tr></thead>
<tbody>${topUps.map((t) => html`<tr><td>${time(t.occurred_at)}</td><td>${t.account_id}</td><td><code>${t.reference}</code></td><td class="num">${money(t.amount_nanos)}</td></tr>`)}</tbody></table>
<h2>Projections</h2>
<table id="projections"><thead><tr><th>Read model</th><th>Checkpoint</th><th>Updated</th><th class="num">Lag (events)</th></tr></thead>
<tbody>${projections.map(
        (
          p,
        ) => html`<tr><td>${p.name}</td><td><code>${p.checkpoint || '(start)'}</code></td><td>${time(p.updated_at ? new Date(p.updated_at) : null)}</td>
<td class="num">${p.lag}${p.lag_is_lower_bound ? '+' : ''}</td></tr>`,
      )}</tbody></table>
<h2>Reconciliation</h2>
${
  reconciled.length === 0
    ? html`<p class="muted" id="reconciliation">No reconciliation yet: with a provider's admin key set, the daily worker and <code>gateway reconcile --day</code> compare the ledger with its cost report (docs/billing.md).</p>`
    : html`<table id="reconciliation"><thead><tr><th>Day</th><th>Provider</th><th>Credential</th><th>Model</th><th class="num">Ledger</th><th class="num">Provider bills</th><th class="num">Variance</th><th></th></tr></thead>
<tbody>${reconciled.flatMap((r) =>
        r.rows.map(
          (
            row,
          ) => html`<tr${row.flagged ? html` class="flagged"` : ''}><td>${r.day}</td><td>${r.provider}</td><td>${row.credential}</td><td>${row.model}</td>
<td class="num">${money(row.ledger_nanos)}</td><td class="num">${money(row.provider_nanos)}</td>
<td class="num">${money(row.variance_nanos)}${row.variance_percent === null ? '' : ` (${row.variance_percent}%)`}</td><td>${row.flagged ? `above ${r.threshold_percent}%` : ''}</td></tr>`,
        ),
      )}</tbody></table>`
}
<h2>Audit</h2>
<form method="post" action="/dashboard/admin/audit" class="row">${request.viewer ? csrfField(request.viewer) : ''}
<button type="submit" class="plain">Run the audit now</button></form>
${
  latest
    ? html`<p>Latest report (${latest.scope}), ${time(latest.at)}: <strong id="audit-result">${latest.ok ? 'PASS' : 'FAIL'}</strong></p><pre id="audit-report">${latest.report}</pre>`
    : html`<p class="muted">No audit has run on this database yet. <code>gateway audit</code> runs the same checks from the CLI; either one's report shows here.</p>`
}`,
    });
  });

  app.post('/dashboard/admin/audit', { config: { dashboard: 'admin' } }, async (_request, reply) => {
    // One at a time: a second click waits for the run in progress instead of reading the log again.
    // The run keeps its report (src/audit/reports.ts), which the page then reads as the latest.
    running ??= runAudit(deps.pool, deps.store, { now: deps.clock() }).finally(() => {
      running = undefined;
    });
    await running;
    return reply.redirect('/dashboard/admin', 303);
  });
}
