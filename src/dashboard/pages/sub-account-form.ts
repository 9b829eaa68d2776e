import type { SubAccountInput, SubAccountRecord } from '../../accounts/sub-accounts.ts';
import { invalidField } from '../../contracts/errors.ts';
import { Settings } from '../../http/routes/v1/sub-accounts.ts';
import { checked, decimal, dollars, lines, posted, text } from '../forms.ts';
import { type Html, html, usd } from '../html.ts';
import { csrfField, type Viewer } from '../layout.ts';

type KeyViewer = Extract<Viewer, { kind: 'account' }>;

/** Long enough that the API's schema, not a silent cut, decides what is too long. */
const UNCUT = 10_000;
/** `local/* = 30`, `openai/gpt-4o 25%`: a pattern (no spaces or `=` in one), then its markup in percent. */
const OVERRIDE = /^(\S+?)\s*(?:=|\s)\s*(-?\d+(?:\.\d+)?)\s*%?$/;

/**
 * A sub-account form's fields as the API takes them (`POST`/`PATCH /v1/sub-accounts`), checked with the API's own
 * schema. Each form on the page posts only its own fields; a field not posted is left as it is. Lists are typed one
 * item a line, and a refusal names the line.
 */
export function settingsFrom(body: Record<string, unknown>, creating: boolean): SubAccountInput {
  const input: Record<string, unknown> = {};
  const overrideLines: number[] = [];
  const modelLines: number[] = [];
  if (posted(body, 'name')) input.name = body.name;
  if (posted(body, 'external_ref')) input.external_ref = text(body.external_ref, UNCUT) ?? null;
  if (posted(body, 'default_tag')) input.default_tag = text(body.default_tag, UNCUT) ?? null;
  if (posted(body, 'spend_cap')) {
    const cents = dollars(body.spend_cap, 'spend_cap');
    if (cents === undefined) throw invalidField('spend_cap', 'required: an amount in dollars, such as 25');
    input.spend_cap_cents = cents;
  }
  if (posted(body, 'spend_cap_reset')) input.spend_cap_reset = text(body.spend_cap_reset) ?? null;
  if (posted(body, 'rate_limit_rpm')) {
    const rpm = decimal(body.rate_limit_rpm, 'rate_limit_rpm', 'a whole number of requests per minute');
    if (rpm !== undefined) input.rate_limit_rpm = rpm;
  }
  if (posted(body, 'rate_limit_tpm'))
    input.rate_limit_tpm =
      decimal(body.rate_limit_tpm, 'rate_limit_tpm', 'a whole number of tokens per minute, or empty') ?? null;
  if (posted(body, 'markup_percent'))
    input.markup_percent =
      decimal(body.markup_percent, 'markup_percent', 'a percentage such as 30 or 12.5') ?? 0;
  if (posted(body, 'price_overrides')) {
    input.price_overrides = lines(body.price_overrides).map(({ line, text: typed }) => {
      const match = OVERRIDE.exec(typed);
      if (!match)
        throw invalidField(
          'price_overrides',
          `line ${line}: a model pattern and a percentage, such as local/* = 30`,
        );
      overrideLines.push(line);
      return { model: match[1], markup_percent: Number(match[2]) };
    });
  }
  if (posted(body, 'allowed_models_mode')) {
    if (body.allowed_models_mode === 'all') input.allowed_models = null;
    else {
      input.allowed_models = lines(body.allowed_models).flatMap(({ line, text: typed }) =>
        typed.split(/[\s,]+/).map((pattern) => {
          modelLines.push(line);
          return pattern;
        }),
      );
    }
  }
  if (creating && input.name === undefined) throw invalidField('name', 'required');
  if (creating && input.spend_cap_cents === undefined)
    throw invalidField('spend_cap', 'required: an amount in dollars, such as 25');
  const schema = creating ? Settings : Settings.partial();
  return checked(schema, input, (path) => {
    const [field, index, part] = path;
    if (field === 'spend_cap_cents') return { field: 'spend_cap' };
    if (field === 'price_overrides' && typeof index === 'number')
      return { field, detail: `line ${overrideLines[index]}${part ? ` (${String(part)})` : ''}` };
    if (field === 'allowed_models' && typeof index === 'number')
      return { field, detail: `line ${modelLines[index]}` };
    return { field: path.map(String).join('.') || 'form' };
  }) as SubAccountInput;
}

const capValue = (cents: number) =>
  usd(BigInt(cents) * 10_000_000n)
    .slice(1)
    .replaceAll(',', '');
const RESETS = [
  ['', 'for life'],
  ['daily', 'each UTC day'],
  ['weekly', 'each ISO week (from Monday, UTC)'],
  ['monthly', 'each UTC month'],
] as const;

function resetSelect(current: string | null): Html {
  return html`<select name="spend_cap_reset">${RESETS.map(
    ([value, label]) =>
      html`<option value="${value}"${(current ?? '') === value ? html` selected` : ''}>${label}</option>`,
  )}</select>`;
}

/** The forms of a sub-account's page, each posting its own fields to `/dashboard/sub-accounts/{id}`. */
export function settingsForms(viewer: KeyViewer, sub: SubAccountRecord): Html {
  const action = `/dashboard/sub-accounts/${encodeURIComponent(sub.id)}`;
  const overrides = sub.price_overrides.map((o) => `${o.model} = ${o.markup_percent}`).join('\n');
  const restricted = sub.allowed_models !== null;
  return html`<h2>Customer</h2>
<form method="post" action="${action}" class="row" id="edit-sub-account">${csrfField(viewer)}
  <label>Name<input name="name" value="${sub.name}" maxlength="200"></label>
  <label>Default tag<input name="default_tag" value="${sub.default_tag ?? ''}" maxlength="128"></label>
  <label>External reference<input name="external_ref" value="${sub.external_ref ?? ''}" maxlength="200"></label>
  <button type="submit">Save</button>
</form>
<h2>Price book</h2>
<form method="post" action="${action}" id="price-book">${csrfField(viewer)}
  <div class="row">
  <label>Markup over what the account pays (%)<input name="markup_percent" value="${sub.markup_percent}" inputmode="decimal"></label>
  <label><span>Per-model markups: one <code>pattern = percent</code> a line (<code>*</code>: any run of characters); the first match wins</span>
  <textarea name="price_overrides" rows="4" cols="48" placeholder="openai/* = 40">${overrides}</textarea></label>
  <button type="submit">Save</button></div>
  <p class="muted">From 0 to 1000, at most two decimals. Applies from the customer's next request.</p>
</form>
<h2>Spend cap</h2>
<form method="post" action="${action}" class="row" id="spend-cap">${csrfField(viewer)}
  <label>Cap in the customer's price ($)<input name="spend_cap" value="${capValue(sub.spend_cap_cents)}" inputmode="decimal"></label>
  <label>Renews${resetSelect(sub.spend_cap_reset)}</label>
  <button type="submit">Save</button>
</form>
<h2>Rate limits</h2>
<form method="post" action="${action}" class="row" id="limits">${csrfField(viewer)}
  <label>Requests per minute<input name="rate_limit_rpm" value="${sub.rate_limit_rpm}" inputmode="numeric"></label>
  <label>Tokens per minute (empty: none of its own)<input name="rate_limit_tpm" value="${sub.rate_limit_tpm ?? ''}" inputmode="numeric"></label>
  <button type="submit">Save</button>
</form>
<h2>Allowed models</h2>
<form method="post" action="${action}" id="allowed-models">${csrfField(viewer)}
  <div class="row">
  <label class="choice"><span><input type="radio" name="allowed_models_mode" value="all"${restricted ? '' : html` checked`}> Every model</span>
  <span><input type="radio" name="allowed_models_mode" value="list"${restricted ? html` checked` : ''}> Only these (one id or pattern a line)</span></label>
  <label>Models<textarea name="allowed_models" rows="4" cols="40" placeholder="local/*">${(sub.allowed_models ?? []).join('\n')}</textarea></label>
  <button type="submit">Save</button></div>
</form>`;
}
