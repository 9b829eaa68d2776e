/** Latency and outcome of recent upstream calls, per provider, for GET /health/providers. */
export class ProviderHealth {
  private readonly windows = new Map<string, { latencies: number[]; failures: boolean[]; next: number }>();

  constructor(private readonly size = 500) {}

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

  report(): { provider: string; requests: number; p50_ms: number; p95_ms: number; error_rate: number }[] {
    return [...this.windows]
      .map(([provider, window]) => {
        const sorted = [...window.latencies].sort((a, b) => a - b);
        const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
        const failures = window.failures.filter(Boolean).length;
        return {
          provider,
          requests: sorted.length,
          p50_ms: Math.round(at(0.5)),
          p95_ms: Math.round(at(0.95)),
          error_rate: sorted.length === 0 ? 0 : failures / sorted.length,
        };
      })
      .sort((a, b) => a.provider.localeCompare(b.provider));
  }
}
