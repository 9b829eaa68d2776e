import type { CatalogModel } from '../catalog/types.ts';
import type { ModalityUpstream } from '../contracts/modality.ts';
import { type Discount, type PriceLine, priceCharge } from '../contracts/money.ts';
import { meteredCall } from './call.ts';
import { reserve } from './ledger.ts';
import { ownerOf } from './own-key.ts';
import type { CallContext, Outcome, PipelineDeps } from './types.ts';

/** The endpoints priced by lines share the chat path's dependencies: the catalog, keys, ledger and health. */
export type ModalityDeps = PipelineDeps;
export type RequestContext = CallContext;

/** How a served call is billed: what was used, priced, and whether the provider said so or the gateway counted. */
export interface Billed {
  lines: PriceLine[];
  usageReported: boolean;
  /** In the endpoint's natural unit (tokens, search units), for the usage report. */
  units: number;
}

/** A settled call: its outcome and the provider's answer. */
export type Served<R> = Outcome & { result: R };

/**
 * The metered call of an endpoint priced by lines (embeddings, moderations, rerank, images, audio, OCR, ...): one
 * resolved model, its worst case held, the call (with the pipeline's retries, on a credential of the provider's
 * pool, which `call` is given in its upstream), what was used settled, and on a failure the hold released and the
 * failure passed on as the client sees it.
 */
export async function pricedCall<R>(
  deps: ModalityDeps,
  context: RequestContext,
  target: { model: CatalogModel; upstream: ModalityUpstream },
  worstCase: PriceLine[],
  call: (upstream: ModalityUpstream) => Promise<R>,
  bill: (result: R) => Billed,
  /** `batch` for a line of a batch: held and charged at the batch price. */
  discount: Discount = 'none',
  /**
   * The worst case in tokens, for the caller's tokens-per-minute limit, from an endpoint that counts tokens
   * (embeddings); `units` of the bill are then tokens too. Absent: the endpoint takes no tokens.
   */
  worstTokens?: number,
): Promise<Served<R>> {
  const worst = priceCharge(worstCase, discount).chargedNanos;
  const owner = ownerOf(context, discount);
  const { model } = target;
  const { result, outcome } = await meteredCall(deps, {
    resolve: () => [{ model, upstream: target.upstream }],
    reserve: async () => {
      const tokens = worstTokens === undefined ? undefined : await context.tokenLimit?.admit(worstTokens);
      try {
        const hold = await reserve(deps.spending, context, { minNanos: worst, maxNanos: worst }, model.id);
        return { hold, ...(tokens && { tokens }) };
      } catch (error) {
        await tokens?.release();
        throw error;
      }
    },
    // Billed inside the call, so that a bill that cannot be made (an answer that does not fit) releases the hold.
    call: async (keyed) => {
      const answer = await call(keyed.upstream);
      context.log?.respond(answer);
      return { answer, billed: bill(answer) };
    },
    bill: ({ billed }) => ({
      charge: priceCharge(billed.lines, discount),
      usageReported: billed.usageReported,
      units: billed.units,
    }),
    // The requester's own provider key first, charged the fee alone, as chat does (docs/providers.md).
    ...(owner && { owner }),
  });
  return { ...outcome, result: result.answer };
}
