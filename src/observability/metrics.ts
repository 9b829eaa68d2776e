import client from 'prom-client';
import type { EventStore } from '../../events/store.ts';
import type { Projection, Sql } from '../../projections/types.ts';
import { watchLoopTurns } from './loop-turns.ts';

/**
 * Prometheus metrics (`GET /metrics`, docs/operations.md). Figures counted by this process (requests, latency,
 * upstream calls, cache lookups) sit beside figures read from the store at each scrape (holds, charges, read-model
 * lag, the webhook queue), which are the whole deployment's: every instance reports the same for those.
 */

/** Upstream calls are made where no app is at hand: one histogram for the process. */
const processRegistry = new client.Registry();
client.collectDefaultMetrics({ register: processRegistry, prefix: 'gateway_' });
watchLoopTurns(processRegistry);

export const upstreamSeconds = new client.Histogram({
  name: 'gateway_upstream_duration_seconds',
  help: 'Time to a provider response headers (or failure), per upstream host and HTTP status',
  labelNames: ['host', 'status'] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [processRegistry],
});

/** Provider credentials taken out of rotation by a provider's refusal (401, 403, quota or billing). */
export const credentialsOut = new client.Counter({
  name: 'gateway_provider_credential_out_total',
  help: 'Provider credentials taken out of rotation by the provider refusing them, per provider, credential and reason',
  labelNames: ['provider', 'credential', 'reason'] as const,
  registers: [processRegistry],
});

/** Events behind the log's head counted per read model, up to this many (more reads as this many). */
export const LAG_COUNT_LIMIT = 10_000;

export interface StoreProbe {
  sql: Sql;
  store: EventStore;
  projections: readonly Projection[];
}

/** Per read model, how many events of the log it has not folded yet (at most `limit`). */
export async function readModelLag(probe: StoreProbe, limit = LAG_COUNT_LIMIT): Promise<Map<string, number>> {
  if (probe.store.kind === 'postgres') return countedLag(probe, limit);
  const { rows } = await probe.sql.query<{ name: string; checkpoint: string }>(
    'SELECT name, checkpoint FROM projection_checkpoints',
  );
  const checkpoints = new Map(rows.map((r) => [r.name, r.checkpoint]));
  const of = (p: Projection) => checkpoints.get(p.name) ?? '';
  // One page from the read model furthest behind covers all of them.
  const oldest = probe.projections
    .map(of)
    .reduce(
      (a, b) => (probe.store.compareCheckpoints(a, b) <= 0 ? a : b),
      of(probe.projections[0] as Projection),
    );
  const page = await probe.store.readAll(oldest, { maxCount: limit });
  const lag = new Map<string, number>();
  for (const projection of probe.projections) {
    const from = of(projection);
    lag.set(
      projection.name,
      page.filter((e) => probe.store.compareCheckpoints(e.checkpoint, from) > 0).length,
    );
  }
  return lag;
}

/**
 * The same on the PostgreSQL event store, counted in the database (the events table shares the read models'
 * schema): no event is read, so a scrape or a readiness probe stays cheap while read models lag.
 */
async function countedLag(probe: StoreProbe, limit: number): Promise<Map<string, number>> {
  const { rows } = await probe.sql.query<{ name: string; lag: string }>(
    `SELECT c.name, (SELECT count(*) FROM (
         SELECT 1 FROM events e
          WHERE (e.transaction_id, e.position) > (
                  (CASE WHEN c.checkpoint = '' THEN '0' ELSE split_part(c.checkpoint, '/', 1) END)::xid8,
                  (CASE WHEN c.checkpoint = '' THEN '0' ELSE split_part(c.checkpoint, '/', 2) END)::bigint)
            AND e.transaction_id < pg_snapshot_xmin(pg_current_snapshot())
          LIMIT $1) behind)::text AS lag
       FROM projection_checkpoints c`,
    [limit],
  );
  const lags = new Map(rows.map((r) => [r.name, Number(r.lag)]));
  return new Map(probe.projections.map((p) => [p.name, lags.get(p.name) ?? 0]));
}

export class GatewayMetrics {
  readonly registry = new client.Registry();

  readonly requests = new client.Counter({
    name: 'gateway_http_requests_total',
    help: 'HTTP requests answered, per method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  readonly duration = new client.Histogram({
    name: 'gateway_http_request_duration_seconds',
    help: 'Time from request to the end of the response, per route, model and provider (empty when none)',
    labelNames: ['route', 'model', 'provider'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [this.registry],
  });

  readonly cache = new client.Counter({
    name: 'gateway_cache_lookups_total',
    help: 'What the response cache did per request (X-Cache-Status: hit, miss, skip, …)',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  readonly costNanos = new client.Counter({
    name: 'gateway_charged_nanodollars_total',
    help: 'What this instance charged for requests it answered, in nano-dollars, per model and provider',
    labelNames: ['model', 'provider'] as const,
    registers: [this.registry],
  });

  constructor(probe: StoreProbe | undefined) {
    if (!probe) return;
    const registers = [this.registry];
    new client.Gauge({
      name: 'gateway_holds_open',
      help: 'Holds on balances not yet settled or released (the whole store)',
      registers,
      async collect() {
        const { rows } = await probe.sql.query<{ n: string }>(
          "SELECT count(*)::text AS n FROM holds WHERE status = 'open'",
        );
        this.set(Number(rows[0]?.n ?? 0));
      },
    });
    new client.Gauge({
      name: 'gateway_holds_open_usd',
      help: 'Dollars held by open holds (the whole store)',
      registers,
      async collect() {
        const { rows } = await probe.sql.query<{ n: string | null }>(
          "SELECT sum(amount_nanos)::text AS n FROM holds WHERE status = 'open'",
        );
        this.set(Number(rows[0]?.n ?? 0) / 1e9);
      },
    });
    new client.Gauge({
      name: 'gateway_charges',
      help: 'Requests charged (settled) since the store began (the whole store)',
      registers,
      async collect() {
        const { rows } = await probe.sql.query<{ n: string | null }>(
          'SELECT sum(requests)::text AS n FROM usage',
        );
        this.set(Number(rows[0]?.n ?? 0));
      },
    });
    new client.Gauge({
      name: 'gateway_charged_usd',
      help: 'Dollars charged since the store began (the whole store)',
      registers,
      async collect() {
        const { rows } = await probe.sql.query<{ n: string | null }>(
          'SELECT sum(charged_nanos)::text AS n FROM balances',
        );
        this.set(Number(rows[0]?.n ?? 0) / 1e9);
      },
    });
    new client.Gauge({
      name: 'gateway_projection_lag_events',
      help: `Events of the log a read model has not folded yet (counted up to ${LAG_COUNT_LIMIT})`,
      labelNames: ['projection'] as const,
      registers,
      async collect() {
        for (const [name, lag] of await readModelLag(probe)) this.set({ projection: name }, lag);
      },
    });
    new client.Gauge({
      name: 'gateway_webhook_queue',
      help: 'Webhook deliveries waiting for a first or another attempt (the whole store)',
      registers,
      async collect() {
        const { rows } = await probe.sql.query<{ n: string }>(
          "SELECT count(*)::text AS n FROM webhook_deliveries WHERE status IN ('pending', 'attempting')",
        );
        this.set(Number(rows[0]?.n ?? 0));
      },
    });
  }

  /** The exposition text of this app's metrics and the process's. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    const merged = client.Registry.merge([this.registry, processRegistry]);
    return { contentType: merged.contentType, body: await merged.metrics() };
  }
}
