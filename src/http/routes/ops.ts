import type { FastifyInstance } from 'fastify';
import { START } from '../../../events/store.ts';
import { RequestRefused } from '../../contracts/errors.ts';
import type { RateLimiter } from '../../limits/rate-limiter.ts';
import { type GatewayMetrics, readModelLag, type StoreProbe } from '../../observability/metrics.ts';
import { describeError } from '../errors.ts';

export interface OpsDeps {
  probe: StoreProbe;
  limiter: RateLimiter;
  metrics: GatewayMetrics;
}

/** Read models further behind the log than this many events make the instance not ready. */
export const READY_MAX_LAG = 1000;
const CHECK_TIMEOUT_MS = 2000;

function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/**
 * `/healthz` (the process serves: liveness), `/readyz` (its dependencies answer and the read models are current:
 * readiness; 503 naming what fails) — both without credentials, for load balancers and orchestrators — and
 * `/metrics` for Prometheus, behind the admin token (docs/operations.md).
 */
export async function opsRoutes(app: FastifyInstance, deps: OpsDeps): Promise<void> {
  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_request, reply) => {
    const checks: Record<string, string> = {};
    const check = async (name: string, run: () => Promise<string | undefined>) => {
      try {
        checks[name] = (await within(CHECK_TIMEOUT_MS, run())) ?? 'ok';
      } catch (error) {
        checks[name] = `failing: ${(error as Error).message}`;
      }
    };
    await Promise.all([
      check('database', async () => {
        await deps.probe.sql.query('SELECT 1');
        return undefined;
      }),
      check('event_store', async () => {
        await deps.probe.store.readAll(START, { maxCount: 1 });
        return undefined;
      }),
      check('read_models', async () => {
        // Reading one event past the threshold is enough to know.
        const lags = await readModelLag(deps.probe, READY_MAX_LAG + 1);
        const behind = [...lags].filter(([, lag]) => lag > READY_MAX_LAG);
        if (behind.length > 0)
          throw new Error(
            `behind the log by more than ${READY_MAX_LAG} events: ${behind.map(([name]) => name).join(', ')}`,
          );
        return undefined;
      }),
      check('redis', async () => {
        const ping = deps.limiter.ping?.bind(deps.limiter);
        if (!ping) return 'not configured';
        await ping();
        return undefined;
      }),
    ]);
    const failing = Object.entries(checks).filter(([, value]) => value.startsWith('failing'));
    if (failing.length === 0) return { status: 'ready', checks };
    const message = `not ready: ${failing.map(([name, value]) => `${name} ${value}`).join('; ')}`;
    const { error } = describeError(new RequestRefused('unavailable', message)).body;
    return reply.code(503).send({ status: 'not_ready', checks, error });
  });

  app.get('/metrics', { onRequest: app.requireAdmin }, async (_request, reply) => {
    const { contentType, body } = await deps.metrics.scrape();
    return reply.type(contentType).send(body);
  });
}
