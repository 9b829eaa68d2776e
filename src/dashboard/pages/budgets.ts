import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { monthOf } from '../../../events/budget.ts';
import { CostTag } from '../../chat/request.ts';
import { invalidField } from '../../contracts/errors.ts';
import { checked, dollars, formOf, text } from '../forms.ts';
import { html, money, usd } from '../html.ts';
import type { DashboardContext } from '../index.ts';
import { csrfField } from '../layout.ts';
import { spendBy } from '../queries.ts';

/** The tag as `POST /v1/budgets` and `DELETE /v1/budgets/{tag}` take it. */
const Tag = z.object({ tag: CostTag });

/**
 * Monthly caps per cost tag: the caps in force (the live state every hold reads, as `GET /v1/budgets` lists them)
 * with this month's spend, set and removed through the account service, as the API's are.
 */
export function budgetPages(app: FastifyInstance, ctx: DashboardContext): void {
  const { deps } = ctx;
  const config = { dashboard: 'main' as const };
  const tagOf = (value: unknown) => checked(Tag, { tag: typeof value === 'string' ? value : '' }).tag;

  app.get('/dashboard/budgets', { config }, async (request, reply) => {
    const viewer = ctx.main(request);
    const month = monthOf(deps.clock());
    const spent = await spendBy(deps.pool, { accountId: viewer.accountId, subAccountId: null }, month, 'tag');
    const budgets = [...(deps.live.account(viewer.accountId)?.tagBudgets ?? new Map<string, bigint>())].sort(
      ([a], [b]) => (a < b ? -1 : a > b ? 1 : 0),
    );
    return ctx.render(reply, viewer, {
      title: 'Budgets',
      section: '/dashboard/budgets',
      body: html`<p class="muted">A monthly cap per cost tag (UTC calendar months), in what the account pays, enforced
by every request's hold. A sub-account's requests count under its default tag, whatever tag they send.</p>
<table id="budgets"><thead><tr><th>Tag</th><th class="num">Spent in ${month}</th><th class="num">Cap</th><th class="num">Used</th><th></th></tr></thead>
<tbody>${budgets.map(([tag, cap]) => {
        const used = BigInt(spent.find((s) => s.key === tag)?.cost_nanos ?? '0');
        const percent = cap === 0n ? '—' : `${(used * 100n) / cap}%`;
        return html`<tr data-tag="${tag}"><td>${tag}</td><td class="num">${money(used)}</td><td class="num">${usd(cap)}</td><td class="num">${percent}</td>
<td><form method="post" action="/dashboard/budgets/remove" class="inline" hx-confirm="Remove the budget of ${tag}? The tag is uncapped from the next request.">${csrfField(viewer)}
<input type="hidden" name="tag" value="${tag}"><button type="submit" class="danger">Remove</button></form></td></tr>`;
      })}</tbody></table>
${budgets.length === 0 ? html`<p class="muted">No budgets: every tag is uncapped.</p>` : ''}
<h2>Set a budget</h2>
<form method="post" action="/dashboard/budgets" class="row" id="set-budget">${csrfField(viewer)}
  <label>Tag<input name="tag" required maxlength="128"></label>
  <label>Monthly cap ($)<input name="cap" required inputmode="decimal"></label>
  <button type="submit">Save</button>
</form>`,
    });
  });
  app.post('/dashboard/budgets', { config }, async (request, reply) => {
    const viewer = ctx.main(request);
    const body = formOf(request);
    const tag = tagOf(body.tag);
    const cap = dollars(body.cap, 'cap');
    if (cap === undefined) throw invalidField('cap', 'required: an amount in dollars, such as 25');
    await deps.accounts.setTagBudget(viewer.accountId, tag, cap, request.id);
    return reply.redirect('/dashboard/budgets', 303);
  });
  app.post('/dashboard/budgets/remove', { config }, async (request, reply) => {
    const viewer = ctx.main(request);
    const tag = tagOf(text(formOf(request).tag, 1000));
    await deps.accounts.removeTagBudget(viewer.accountId, tag, request.id);
    return reply.redirect('/dashboard/budgets', 303);
  });
}
