import type { KeyHolder } from '../accounts/live-state.ts';
import type { PriceLine } from '../billing/charge.ts';
import { metered } from '../billing/metered.ts';
import type { CatalogModel } from '../catalog/types.ts';
import { type ChatDeps, clientError } from '../chat/dispatch.ts';
import { UpstreamError } from '../providers/errors.ts';

/** The chat path's dependencies serve these endpoints too: the same catalog, keys, ledger and health window. */
export type ModalityDeps = Pick<
  ChatDeps,
  'spending' | 'catalog' | 'env' | 'health' | 'timeoutMs' | 'maxRetryWaitMs'
>;

export interface RequestContext {
  auth: KeyHolder;
  requestId: string;
  tag: string | null;
  /** Aborted when the client goes away; the upstream call stops too. */
  signal: AbortSignal;
}

/** How a served call is billed: what was used, priced, and whether the provider said so or the gateway counted. */
export interface Billed {
  lines: PriceLine[];
  usageReported: boolean;
  /** In the endpoint's natural unit (tokens, search units), for the usage report. */
  units: number;
}

export interface Served<R> {
  model: CatalogModel;
  result: R;
  costNanos: bigint;
  /** Upstream wall-clock time, retries included. */
  latencyMs: number;
}

const RATE_LIMIT_RETRIES = 2;

/**
 * One billed upstream call: the worst case is held, the call runs (waiting out a provider's short Retry-After on
 * a 429, as the chat path does), what was used is settled, and a failure releases the hold and reaches the client
 * as the API's error.
 */
export async function dispatch<R>(
  deps: ModalityDeps,
  context: RequestContext,
  model: CatalogModel,
  worstCase: PriceLine[],
  call: () => Promise<R>,
  bill: (result: R) => Billed,
): Promise<Served<R>> {
  let latencyMs = 0;
  try {
    const { result, costNanos } = await metered(
      deps.spending,
      context.auth,
      { requestId: context.requestId, tag: context.tag, model, worstCase },
      async () => {
        const started = performance.now();
        const result = await withRetries(deps, model.provider, call);
        latencyMs = Math.round(performance.now() - started);
        return { result, ...bill(result) };
      },
    );
    return { model, result, costNanos, latencyMs };
  } catch (error) {
    throw clientError(error, model.id);
  }
}

async function withRetries<R>(deps: ModalityDeps, provider: string, call: () => Promise<R>): Promise<R> {
  for (let attempt = 0; ; attempt++) {
    const started = performance.now();
    try {
      const result = await call();
      deps.health.record(provider, performance.now() - started, true);
      return result;
    } catch (error) {
      if (!(error instanceof UpstreamError)) throw error;
      deps.health.record(provider, performance.now() - started, false);
      const wait = error.retryAfterMs ?? 250 * 2 ** attempt;
      if (error.failure !== 'rate_limited' || attempt >= RATE_LIMIT_RETRIES || wait > deps.maxRetryWaitMs) {
        throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}
