import { findModel } from '../catalog/extra-models.ts';
import type { Catalog, CatalogModel } from '../catalog/types.ts';
import { lineCost } from '../contracts/money.ts';
import { withRetries } from '../pipeline/retries.ts';
import type { PipelineDeps } from '../pipeline/types.ts';
import { adapterFor, modalityUpstreamOf } from '../providers/registry.ts';
import { countTextTokens } from '../tokens/count.ts';
import { unit } from './vector-index.ts';

/** A prompt's embedding for a semantic lookup, and what the provider billed the gateway for it. */
export interface Embedded {
  vector: Float32Array;
  costNanos: bigint;
}

/**
 * Embeds prompts with the configured embedding model through the gateway's own provider layer (the same adapters
 * and retries as /v1/embeddings). The cost is the gateway's, not the client's: it is recorded on the request's log
 * record and never charged.
 */
export class CacheEmbedder {
  private constructor(
    readonly model: CatalogModel,
    private readonly deps: Pick<PipelineDeps, 'env' | 'timeoutMs' | 'health' | 'maxRetryWaitMs'>,
  ) {}

  /** The embedder for the configured id, or why there is none (the gateway then looks up exactly only). */
  static open(
    id: string | undefined,
    deps: Pick<PipelineDeps, 'env' | 'timeoutMs' | 'health' | 'maxRetryWaitMs'> & { catalog: Catalog },
  ): CacheEmbedder | string | undefined {
    if (!id) return undefined;
    const model = findModel(deps.catalog, id);
    if (model?.modality !== 'embedding') return `${id} is not an embedding model of the catalog`;
    if (!adapterFor(model, 'embeddings') || !modalityUpstreamOf(model, deps.env, 0))
      return `${id} is not reachable on this gateway (no adapter or no key)`;
    return new CacheEmbedder(model, deps);
  }

  async embed(text: string, signal: AbortSignal): Promise<Embedded> {
    const adapter = adapterFor(this.model, 'embeddings');
    const upstream = modalityUpstreamOf(this.model, this.deps.env, this.deps.timeoutMs);
    if (!adapter || !upstream) throw new Error(`${this.model.id} is no longer reachable`);
    const result = await withRetries(this.deps, this.model.provider, () =>
      adapter.embed({ inputs: [text], upstream, signal }),
    );
    const vector = result.vectors[0];
    if (!vector || vector.length === 0) throw new Error(`${this.model.id} answered no vector`);
    const tokens = result.inputTokens ?? countTextTokens(text);
    const costNanos = lineCost({
      item: 'input_tokens',
      quantity: tokens,
      unitPriceNanosPerMillion: this.model.prices.inputNanosPerMillion ?? 0n,
    });
    return { vector: unit(vector), costNanos };
  }
}
