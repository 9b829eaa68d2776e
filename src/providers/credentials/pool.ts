import type { CredentialSpec } from '../../config-file.ts';
import { UpstreamError } from '../errors.ts';
import { CredentialAffinity } from './affinity.ts';
import { CredentialUsage } from './limits.ts';
import type { CredentialOut, CredentialReport, CredentialState, OutReason } from './report.ts';

export type { CredentialOut, CredentialReport, CredentialSpec, CredentialState, OutReason };

interface Entry extends CredentialSpec {
  state: CredentialState;
  reason: CredentialReport['reason'];
  since: Date | null;
  until: Date | null;
  message: string | null;
  status: number | null;
  /** Kept through every change of state: limits count what was used, whatever happened since. */
  usage: CredentialUsage;
}

/** How long a credential rests after a 429 that names no Retry-After. */
export const DEFAULT_COOLING_MS = 30_000;

export class UnknownCredential extends Error {
  override readonly name = 'UnknownCredential';
}

/**
 * Every provider's credentials and how each stands, in this instance's memory: the choice per call is a weighted
 * draw among those in rotation, with no I/O. A provider with no configured pool gets a one-credential pool named
 * `default` from its environment key, on first use.
 */
export class CredentialPools {
  private readonly pools = new Map<string, Entry[]>();
  private readonly listeners: Array<(out: CredentialOut) => void> = [];
  /** The credential each recent conversation was served on, by its opening (pipeline/credentials.ts). */
  readonly affinity = new CredentialAffinity();

  constructor(
    configured: Record<string, CredentialSpec[]>,
    /** The provider's single key (`<PROVIDER>_API_KEY`), for a provider with no configured pool. */
    private readonly envKey: (provider: string) => string | undefined,
    private readonly clock: () => Date = () => new Date(),
    private readonly random: () => number = Math.random,
  ) {
    for (const [provider, specs] of Object.entries(configured)) {
      this.pools.set(provider, specs.map(fresh));
    }
  }

  /** Told of every credential a provider's refusal takes out (metrics, the operator's webhook, the log). */
  onOut(listener: (out: CredentialOut) => void): void {
    this.listeners.push(listener);
  }

  /** A weighted draw among the provider's credentials in rotation, leaving out those already tried by this call. */
  pick(provider: string, tried: ReadonlySet<string>): CredentialSpec | undefined {
    const now = this.clock();
    const entries = this.entries(provider);
    // A lone credential has nothing to give way to: it is asked whatever the provider last said (as before pools),
    // unless the operator took it out.
    const [lone] = entries;
    // A limit is the operator's own, so it holds for a lone credential too.
    if (entries.length === 1 && lone && !tried.has(lone.name) && lone.reason !== 'operator') {
      return lone.usage.reached(now) ? undefined : this.take(lone, now);
    }
    const usable = entries.filter(
      (e) => !tried.has(e.name) && this.inRotation(e, now) && !e.usage.reached(now),
    );
    const total = usable.reduce((sum, e) => sum + e.weight, 0);
    let draw = this.random() * total;
    for (const entry of usable) {
      draw -= entry.weight;
      if (draw < 0) return this.take(entry, now);
    }
    const last = usable.at(-1);
    return last && this.take(last, now);
  }

  /** How many credentials the provider's pool has: a lone one has nothing to keep a conversation on. */
  size(provider: string): number {
    return this.entries(provider).length;
  }

  /** The named credential, when the call has not tried it and it is usable now (in rotation, within its limits). */
  pickNamed(provider: string, name: string, tried: ReadonlySet<string>): CredentialSpec | undefined {
    const now = this.clock();
    const entry = this.entries(provider).find((e) => e.name === name);
    if (!entry || tried.has(name) || !this.inRotation(entry, now) || entry.usage.reached(now))
      return undefined;
    return this.take(entry, now);
  }

  /**
   * The credential that holds a provider-side object (a job, a batch), for its later calls: the owner must be asked
   * whatever its rest or the operator's pause, so only a credential no longer configured or refused by the provider
   * (which would answer with its refusal, or another key's 404) is unusable, and says why (`is no longer configured`).
   */
  owner(provider: string, name: string): CredentialSpec | { unusable: string } {
    const entry = this.entries(provider).find((e) => e.name === name);
    if (!entry) return { unusable: 'is no longer configured' };
    if (entry.state === 'out' && entry.reason !== 'operator')
      return { unusable: `was refused by the provider (${entry.reason})` };
    return entry;
  }

  private take(entry: Entry, now: Date): Entry {
    entry.usage.started(now);
    return entry;
  }

  /** What a served call used of the credential: its tokens (per minute) and its pass-through (per month). */
  used(provider: string, name: string, tokens: number, passThroughNanos: bigint): void {
    const entry = this.entries(provider).find((e) => e.name === name);
    entry?.usage.used(tokens, passThroughNanos, this.clock());
  }

  /** The pass-through the charges of this month already name for a credential (at start, from the read model). */
  seedSpend(provider: string, name: string, month: string, nanos: bigint): void {
    const entry = this.entries(provider).find((e) => e.name === name);
    entry?.usage.seed(month, nanos, this.clock());
  }

  /** Whether any credential has a monthly spend ceiling, so that its month's spend is worth reading at start. */
  spendLimited(): Array<{ provider: string; name: string }> {
    return [...this.pools.entries()].flatMap(([provider, entries]) =>
      entries
        .filter((e) => e.limits?.monthlySpendNanos !== undefined)
        .map((e) => ({ provider, name: e.name })),
    );
  }

  /** The error a call gets when no credential of the provider is in rotation: as the provider would answer. */
  exhausted(provider: string): UpstreamError {
    const now = this.clock();
    const entries = this.entries(provider);
    const rooms = entries
      .filter((e) => e.state !== 'out')
      .map((e) => (e.state === 'cooling' && e.until && e.until > now ? e.until : e.usage.reached(now)?.until))
      .filter((until): until is Date => until !== undefined);
    if (rooms.length > 0) {
      const soonest = Math.min(...rooms.map((until) => until.getTime()));
      return new UpstreamError(
        'rate_limited',
        `every ${provider} credential is rate limited or at its limit`,
        429,
        soonest - now.getTime(),
      );
    }
    const last = entries.filter((e) => e.state === 'out').sort((a, b) => time(b.since) - time(a.since))[0];
    const why = entries.map((e) => `${e.name}: ${e.reason ?? e.state}`).join(', ');
    return new UpstreamError(
      'client',
      `no ${provider} credential is in rotation (${why || 'none configured'})${last?.message ? `: ${last.message}` : ''}`,
      last?.status ?? 401,
    );
  }

  /**
   * Judges a failed call made with the credential: a 429 rests it (for the provider's Retry-After), a refusal of
   * the credential itself takes it out. True when the call should move on to another credential.
   */
  judge(provider: string, name: string, error: unknown): boolean {
    if (!(error instanceof UpstreamError) || error.status === undefined) return false;
    const entry = this.entries(provider).find((e) => e.name === name);
    if (!entry) return false;
    const now = this.clock();
    const refusal = refusalOf(error);
    if (refusal) {
      if (entry.state === 'out') return true;
      // Some providers quote the refused key back; the message goes to the log, health and the operator's notice.
      const message = error.message.split(entry.key).join('[redacted]');
      Object.assign(entry, { state: 'out', reason: refusal, since: now, until: null });
      Object.assign(entry, { message, status: error.status });
      const out = { provider, credential: name, reason: refusal, status: error.status, message };
      for (const listener of this.listeners) listener({ ...out, at: now });
      return true;
    }
    if (error.failure !== 'rate_limited') return false;
    const until = new Date(now.getTime() + (error.retryAfterMs ?? DEFAULT_COOLING_MS));
    if (entry.state !== 'out') {
      Object.assign(entry, {
        state: 'cooling',
        reason: 'rate_limited',
        since: now,
        until,
        message: error.message,
      });
    }
    return true;
  }

  /** A call the credential served: a lone credential the provider refused or rate limited before is back. */
  served(provider: string, name: string): void {
    const entries = this.entries(provider);
    const [lone] = entries;
    if (
      entries.length === 1 &&
      lone?.name === name &&
      lone.state !== 'active' &&
      lone.reason !== 'operator'
    ) {
      Object.assign(lone, fresh(lone));
    }
  }

  /** The operator takes a credential out of rotation, or puts one back (clearing any refusal or cooling). */
  setInRotation(provider: string, name: string, inRotation: boolean): CredentialReport {
    const entry = this.entries(provider).find((e) => e.name === name);
    if (!entry) throw new UnknownCredential(`no credential '${name}' for provider '${provider}'`);
    if (inRotation) Object.assign(entry, fresh(entry));
    else
      Object.assign(entry, {
        state: 'out',
        reason: 'operator',
        since: this.clock(),
        until: null,
        message: null,
      });
    return this.describe(entry, this.clock());
  }

  /**
   * Adds a credential to the provider's pool (after its `default`, when the environment gives one), or changes the
   * key, weight and limits of the one of that name, keeping its standing and what it used.
   */
  put(provider: string, spec: CredentialSpec): void {
    const entries = this.entries(provider);
    const entry = entries.find((e) => e.name === spec.name);
    if (!entry) return void entries.push(fresh(spec));
    Object.assign(entry, { key: spec.key, weight: spec.weight, limits: spec.limits });
    entry.usage.setLimits(spec.limits ?? {});
  }

  /** Takes a credential out of the pool for good: later calls about what it holds find it no longer configured. */
  remove(provider: string, name: string): void {
    const entries = this.pools.get(provider);
    const at = entries?.findIndex((e) => e.name === name) ?? -1;
    if (entries && at >= 0) entries.splice(at, 1);
  }

  /** The credential of that name as configured (its secret included): for the operator's views, never a client's. */
  spec(provider: string, name: string): CredentialSpec | undefined {
    return this.entries(provider).find((e) => e.name === name);
  }

  /** Every provider with credentials, and each credential's standing. */
  report(): Array<{ provider: string; credentials: CredentialReport[] }> {
    const now = this.clock();
    return [...this.pools.entries()]
      .filter(([, entries]) => entries.length > 0)
      .map(([provider, entries]) => ({ provider, credentials: entries.map((e) => this.describe(e, now)) }))
      .sort((a, b) => a.provider.localeCompare(b.provider));
  }

  /** One provider's credentials (creating its `default` pool from the environment), for the admin API. */
  credentialsOf(provider: string): CredentialReport[] {
    const now = this.clock();
    return this.entries(provider).map((e) => this.describe(e, now));
  }

  private entries(provider: string): Entry[] {
    let entries = this.pools.get(provider);
    if (!entries) {
      const key = this.envKey(provider);
      entries = key ? [fresh({ name: 'default', key, weight: 1 })] : [];
      this.pools.set(provider, entries);
    }
    return entries;
  }

  private inRotation(entry: Entry, now: Date): boolean {
    if (entry.state === 'cooling' && entry.until && entry.until <= now) Object.assign(entry, fresh(entry));
    return entry.state === 'active' && entry.weight > 0;
  }

  private describe(entry: Entry, now: Date): CredentialReport {
    this.inRotation(entry, now);
    const reached = entry.usage.reached(now);
    return {
      name: entry.name,
      weight: entry.weight,
      state: entry.state,
      reason: entry.reason,
      since: entry.since?.toISOString() ?? null,
      until: entry.until?.toISOString() ?? null,
      message: entry.message,
      limit: reached ? { reached: reached.limit, until: reached.until.toISOString() } : null,
    };
  }
}

function fresh(spec: CredentialSpec & { usage?: CredentialUsage }): Entry {
  const { name, key, weight, limits } = spec;
  return {
    name,
    key,
    weight,
    ...(limits && { limits }),
    usage: spec.usage ?? new CredentialUsage(limits ?? {}),
    state: 'active',
    reason: null,
    since: null,
    until: null,
    message: null,
    status: null,
  };
}

const time = (date: Date | null) => date?.getTime() ?? 0;

/**
 * A refusal of the credential itself rather than of the request: 401, 403, 402, and the quota and billing errors
 * some providers send with another status (OpenAI's `insufficient_quota` is a 429, Anthropic's `billing_error` a
 * 400).
 */
function refusalOf(error: UpstreamError): CredentialOut['reason'] | undefined {
  if (error.code === 'insufficient_quota' || error.code === 'billing_error' || error.status === 402)
    return 'quota';
  if (error.status === 401) return 'unauthorized';
  if (error.status === 403) return 'forbidden';
  return undefined;
}
