import { UpstreamError } from './errors.ts';
import type { OfferedModels } from './offered-models.ts';
import { apiKeyOf, baseUrlOf, modelListerOf } from './registry.ts';

/** How often the providers are asked again, unless GATEWAY_MODEL_LIST_INTERVAL_MS says otherwise. */
export const DEFAULT_MODEL_LIST_INTERVAL_MS = 10 * 60_000;
/** How long a provider may take to start answering one page of its list. */
const PAGE_TIMEOUT_MS = 10_000;
/** How long one provider's whole list may take; a start waits for the first answers at most this long. */
const LIST_DEADLINE_MS = 30_000;

export class ModelListSettingsError extends Error {
  override readonly name = 'ModelListSettingsError';
}

/** GATEWAY_MODEL_LIST_INTERVAL_MS: milliseconds between two rounds of asking (at least 10), or 0 for never again. */
export function modelListIntervalMs(env: NodeJS.ProcessEnv): number {
  const raw = env.GATEWAY_MODEL_LIST_INTERVAL_MS?.trim();
  if (raw === undefined || raw === '') return DEFAULT_MODEL_LIST_INTERVAL_MS;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || (value !== 0 && value < 10)) {
    throw new ModelListSettingsError(
      `GATEWAY_MODEL_LIST_INTERVAL_MS: a whole number of milliseconds, at least 10 (or 0: asked at start only), not '${raw}'`,
    );
  }
  return value;
}

export interface ModelListPollerDeps {
  env: NodeJS.ProcessEnv;
  /** The catalog's providers: those configured and having a list are asked. */
  providers: readonly string[];
  offered: OfferedModels;
  clock: () => Date;
  intervalMs: number;
  /** After the first round, and after any round in which some provider's list changed. */
  onChange(): Promise<void>;
  log(line: string): void;
}

/**
 * Asks every configured provider that has a model list which models its key can use: once at start (awaited, so
 * the first request is already decided by the lists) and every `intervalMs` after. A failed ask keeps the list known
 * before; before any list, the provider's models count as available, as for a provider with no list.
 */
export class ModelListPoller {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  /**
   * A change not yet recorded: at start (the catalog may have changed since the last start, whatever the lists
   * say), and after a recording failed, so that the next round records again.
   */
  private unrecorded = true;
  private readonly abort = new AbortController();

  constructor(private readonly deps: ModelListPollerDeps) {
    for (const provider of this.asked()) deps.offered.expect(provider);
  }

  /** The providers asked: a list, a key and an address. */
  asked(): string[] {
    const { env, providers } = this.deps;
    return providers.filter(
      (provider) =>
        modelListerOf(provider) !== undefined &&
        apiKeyOf(provider, env) !== undefined &&
        baseUrlOf(provider, env) !== undefined,
    );
  }

  /** The first round, then the schedule. */
  async start(): Promise<void> {
    await this.refresh();
    this.schedule();
  }

  /** One round: every provider asked at once; resolves when all have answered or failed. */
  refresh(): Promise<void> {
    // A round still under way is the one a caller waits for: two at once would only race each other.
    this.running ??= this.round().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.abort.abort();
    await this.running?.catch(() => undefined);
  }

  private schedule(): void {
    if (this.stopped || this.deps.intervalMs === 0) return;
    this.timer = setTimeout(() => {
      void this.refresh().finally(() => this.schedule());
    }, this.deps.intervalMs);
    this.timer.unref();
  }

  private async round(): Promise<void> {
    const { env, offered, clock } = this.deps;
    const outcomes = await Promise.all(
      this.asked().map(async (provider) => {
        const lister = modelListerOf(provider);
        const apiKey = apiKeyOf(provider, env);
        const baseUrl = baseUrlOf(provider, env);
        if (!lister || !apiKey || !baseUrl) return false;
        try {
          const signal = AbortSignal.any([this.abort.signal, AbortSignal.timeout(LIST_DEADLINE_MS)]);
          const ids = await lister({ baseUrl, apiKey, timeoutMs: PAGE_TIMEOUT_MS, signal });
          return offered.listed(provider, ids, clock());
        } catch (error) {
          if (this.stopped) return false;
          const status = error instanceof UpstreamError ? error.status : undefined;
          const message = `${status ? `the provider answered ${status}: ` : ''}${(error as Error).message}`;
          offered.failed(provider, message, clock());
          this.deps.log(
            `asking ${provider} for its model list failed (the list known before stays): ${message}`,
          );
          return false;
        }
      }),
    );
    if (this.stopped || !(outcomes.some(Boolean) || this.unrecorded)) return;
    try {
      await this.deps.onChange();
      this.unrecorded = false;
    } catch (error) {
      this.unrecorded = true;
      this.deps.log(`recording the catalog's changes failed (tried again next round): ${String(error)}`);
    }
  }
}
