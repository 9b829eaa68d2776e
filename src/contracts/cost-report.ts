/**
 * A provider's own cost report for one UTC day (docs/billing.md, Reconciliation), as the providers publish it: money
 * per report group (an OpenAI project, an Anthropic workspace; neither bills per API key) and model.
 */
export interface CostReportCall {
  baseUrl: string;
  /** The organization's admin key: OpenAI's `sk-admin-…`, Anthropic's `sk-ant-admin…`. */
  adminKey: string;
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  timeoutMs: number;
  signal: AbortSignal;
}

export interface CostReportRow {
  /** The project or workspace id; null for the organization's default one. */
  group: string | null;
  /** The model as the provider names it; null for costs that are not a model's (tools, storage). */
  model: string | null;
  nanos: bigint;
}

export type CostReporter = (call: CostReportCall) => Promise<CostReportRow[]>;

/**
 * An exact decimal text (`"123.45"`, `"-0.5"`, `"1e-7"` is refused) scaled by 10^scale into nano-dollars: dollars take
 * scale 9, cents 7. Digits past a nano-dollar round half away from zero (a provider's float has no more meaning).
 */
export function decimalToNanos(text: string, scale: number): bigint {
  const match = /^(-)?(\d+)(?:\.(\d+))?$/.exec(text.trim());
  if (!match) throw new Error(`not a decimal amount: ${text}`);
  const [, sign, whole, fraction = ''] = match;
  const kept = fraction.slice(0, scale).padEnd(scale, '0');
  let nanos = BigInt(whole as string) * 10n ** BigInt(scale) + BigInt(kept || '0');
  if ((fraction[scale] ?? '0') >= '5') nanos += 1n;
  return sign ? -nanos : nanos;
}

/** A JSON number of dollars (OpenAI's `amount.value`), to the nano-dollar. */
export function dollarsToNanosExact(value: number): bigint {
  if (!Number.isFinite(value)) throw new Error(`not an amount: ${value}`);
  return decimalToNanos(value.toFixed(9), 9);
}

/** The report window of a UTC day: its start and the next day's start. */
export function dayWindow(day: string): { start: Date; end: Date } {
  const start = new Date(`${day}T00:00:00.000Z`);
  return { start, end: new Date(start.getTime() + 24 * 3600 * 1000) };
}
