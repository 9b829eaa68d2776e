import type { CredentialSpec } from '../../config-file.ts';

/** The operator's limits on one credential (config file: `rpm`, `tpm`, `monthly_spend_cents`). */
export type CredentialLimits = NonNullable<CredentialSpec['limits']>;

export type LimitReached = 'rpm' | 'tpm' | 'monthly_spend';

const MINUTE_MS = 60_000;
const monthOf = (now: Date) => now.toISOString().slice(0, 7);

/**
 * What one credential used, in this instance's memory: request starts and tokens of the last minute, and the
 * pass-through of the month (seeded at start from the charges that name it). Several instances each count their
 * own, so a limit holds per instance for the minute counts and, for the month, from what was charged at start on.
 */
export class CredentialUsage {
  private readonly starts: number[] = [];
  private readonly tokens: Array<{ at: number; n: number }> = [];
  private month = '';
  private spentNanos = 0n;

  constructor(private limits: CredentialLimits) {}

  /** New limits from now on: a minute's count starts with the next call when its limit was not set before. */
  setLimits(limits: CredentialLimits): void {
    this.limits = limits;
  }

  started(now: Date): void {
    if (this.limits.rpm !== undefined) this.starts.push(now.getTime());
  }

  used(tokens: number, passThroughNanos: bigint, now: Date): void {
    if (this.limits.tpm !== undefined && tokens > 0) this.tokens.push({ at: now.getTime(), n: tokens });
    this.rollMonth(now);
    this.spentNanos += passThroughNanos;
  }

  /** What the charges already name for the credential this month (at start). */
  seed(month: string, nanos: bigint, now: Date): void {
    this.rollMonth(now);
    if (month === this.month) this.spentNanos += nanos;
  }

  /** The limit the credential is at now, if any, and when it next has room. */
  reached(now: Date): { limit: LimitReached; until: Date } | undefined {
    const t = now.getTime();
    const { rpm, tpm, monthlySpendNanos } = this.limits;
    this.rollMonth(now);
    if (monthlySpendNanos !== undefined && this.spentNanos >= monthlySpendNanos) {
      const next = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
      return { limit: 'monthly_spend', until: next };
    }
    while (this.starts.length > 0 && (this.starts[0] as number) <= t - MINUTE_MS) this.starts.shift();
    if (rpm !== undefined && this.starts.length >= rpm) {
      return { limit: 'rpm', until: new Date((this.starts[this.starts.length - rpm] as number) + MINUTE_MS) };
    }
    while (this.tokens.length > 0 && (this.tokens[0]?.at as number) <= t - MINUTE_MS) this.tokens.shift();
    if (tpm !== undefined && this.tokens.reduce((sum, u) => sum + u.n, 0) >= tpm) {
      return { limit: 'tpm', until: new Date((this.tokens[0]?.at as number) + MINUTE_MS) };
    }
    return undefined;
  }

  private rollMonth(now: Date): void {
    const month = monthOf(now);
    if (month === this.month) return;
    this.month = month;
    this.spentNanos = 0n;
  }
}
