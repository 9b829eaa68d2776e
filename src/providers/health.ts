import type { CredentialPools, CredentialReport } from './credentials/pool.ts';
import type { ModelListStatus, OfferedModels } from './offered-models.ts';

/** How a provider's model list stands, as GET /health/providers reports it; null for a provider not asked. */
export interface ModelListReport {
  /** `ok`: the last ask answered; `failing`: it failed (a list fetched before stays in use); `pending`: none yet. */
  status: 'ok' | 'failing' | 'pending';
  models: number | null;
  fetched_at: string | null;
  error: string | null;
  failed_at: string | null;
}

export interface ProviderReport {
  provider: string;
  requests: number;
  p50_ms: number;
  p95_ms: number;
  error_rate: number;
  model_list: ModelListReport | null;
  /** The provider's credentials in this instance: name, state, why and since when (never the secret). */
  credentials: CredentialReport[];
}

/**
 * Latency and outcome of recent upstream calls, per provider, for GET /health/providers; with the state of each
 * configured provider's model list, when the gateway asks for them.
 */
export class ProviderHealth {
  private readonly windows = new Map<string, { latencies: number[]; failures: boolean[]; next: number }>();
  private lists: OfferedModels | undefined;
  private pools: CredentialPools | undefined;

  constructor(private readonly size = 500) {}

  /** Where the model lists' state is read from (the gateway's offered models). */
  reportModelLists(lists: OfferedModels): void {
    this.lists = lists;
  }

  /** Where the credentials' standing is read from. */
  reportCredentials(pools: CredentialPools): void {
    this.pools = pools;
  }

  record(provider: string, latencyMs: number, ok: boolean): void {
    let window = this.windows.get(provider);
    if (!window) {
      window = { latencies: [], failures: [], next: 0 };
      this.windows.set(provider, window);
    }
    // A ring: the oldest outcome makes room for the newest once the window is full.
    window.latencies[window.next] = latencyMs;
    window.failures[window.next] = !ok;
    window.next = (window.next + 1) % this.size;
  }

  report(): ProviderReport[] {
    const lists = new Map((this.lists?.status() ?? []).map((s) => [s.provider, listReport(s)]));
    const pooled = new Map((this.pools?.report() ?? []).map((p) => [p.provider, p.credentials]));
    const providers = new Set([...this.windows.keys(), ...lists.keys(), ...pooled.keys()]);
    return [...providers]
      .map((provider) => {
        const window = this.windows.get(provider);
        const sorted = [...(window?.latencies ?? [])].sort((a, b) => a - b);
        const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
        const failures = window?.failures.filter(Boolean).length ?? 0;
        return {
          provider,
          requests: sorted.length,
          p50_ms: Math.round(at(0.5)),
          p95_ms: Math.round(at(0.95)),
          error_rate: sorted.length === 0 ? 0 : failures / sorted.length,
          model_list: lists.get(provider) ?? null,
          credentials: pooled.get(provider) ?? this.pools?.credentialsOf(provider) ?? [],
        };
      })
      .sort((a, b) => a.provider.localeCompare(b.provider));
  }
}

function listReport(status: ModelListStatus): ModelListReport {
  return {
    status: status.error !== null ? 'failing' : status.fetchedAt ? 'ok' : 'pending',
    models: status.models,
    fetched_at: status.fetchedAt?.toISOString() ?? null,
    error: status.error,
    failed_at: status.failedAt?.toISOString() ?? null,
  };
}
