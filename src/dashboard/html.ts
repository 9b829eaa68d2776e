import { nanosToCents } from '../contracts/money.ts';

/** Markup that is already safe: built by `html` or `raw`, never from a viewer's text. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}

function piece(value: unknown): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(piece).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(value);
}

/** Every interpolated value is escaped unless it is `Html` itself, so no page can be injected into. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] as string;
  values.forEach((value, i) => {
    out += piece(value) + (strings[i + 1] as string);
  });
  return new Html(out);
}

export const raw = (text: string) => new Html(text);

/**
 * An amount from the read models: dollars and cents, or under a dollar and not whole cents, exact cents (a month
 * of a few cheap requests is not "$0.00"); the exact nano-dollars in the title.
 */
export function money(nanos: bigint | string): Html {
  const value = BigInt(nanos);
  const exact = value % 10_000_000n !== 0n && value > -1_000_000_000n && value < 1_000_000_000n;
  return html`<span class="money" title="${value.toString()} nano-dollars">${exact ? cents(value) : usd(value)}</span>`;
}

/** Dollars rounded toward the smaller amount to the cent, as the balance is. */
export function usd(nanos: bigint): string {
  const cents = nanos >= 0n ? nanos / 10_000_000n : -((-nanos + 9_999_999n) / 10_000_000n);
  const sign = cents < 0n ? '-' : '';
  const abs = cents < 0n ? -cents : cents;
  const dollars = (abs / 100n).toLocaleString('en-US');
  return `${sign}$${dollars}.${(abs % 100n).toString().padStart(2, '0')}`;
}

/** Small amounts (a single request) in cents, exact as the API reports them. */
export function cents(nanos: bigint | string): string {
  return `${nanosToCents(BigInt(nanos))}¢`;
}

/** A time the browser rewrites into the viewer's zone; UTC until it does (or without JavaScript). */
export function time(at: Date | null | undefined): Html {
  if (!at) return html`<span class="muted">—</span>`;
  const iso = at.toISOString();
  return html`<time datetime="${iso}">${iso.replace('T', ' ').slice(0, 19)} UTC</time>`;
}
