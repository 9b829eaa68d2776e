import type { Discount } from '../../contracts/money.ts';
import { type ModalityDeps, pricedCall, type RequestContext, type Served } from '../../pipeline/priced.ts';
import { countAll, inputTokensLine, worstCaseTokens } from '../estimate.ts';
import { resolveModalityModel } from '../models.ts';
import { float32Base64 } from './base64.ts';
import { embeddingsEndpoint } from './endpoint.ts';
import type { EmbeddingsRequest, EmbeddingsResponse } from './request.ts';

/** Embeds the inputs, billed per input token at the model's input price. */
export async function createEmbeddings(
  deps: ModalityDeps,
  context: RequestContext,
  body: EmbeddingsRequest,
  discount: Discount = 'none',
): Promise<Served<EmbeddingsResponse>> {
  const target = resolveModalityModel(deps, embeddingsEndpoint, body.model);
  const price = target.model.prices.inputNanosPerMillion ?? 0n;
  const inputs = typeof body.input === 'string' ? [body.input] : body.input;
  const counted = await countAll(inputs);
  const worst = worstCaseTokens(counted, inputs.length);
  const served = await pricedCall(
    deps,
    context,
    target,
    [inputTokensLine(worst, price)],
    (upstream) =>
      target.adapter.embed({
        inputs,
        dimensions: body.dimensions,
        upstream,
        signal: context.signal,
      }),
    (embeddings) => {
      const tokens = embeddings.inputTokens ?? counted;
      return {
        lines: [inputTokensLine(tokens, price)],
        usageReported: embeddings.inputTokens !== undefined,
        units: tokens,
      };
    },
    discount,
    worst,
  );
  const { vectors, inputTokens } = served.result;
  const tokens = inputTokens ?? counted;
  const base64 = body.encoding_format === 'base64';
  return {
    ...served,
    result: {
      object: 'list',
      data: vectors.map((vector, index) => ({
        object: 'embedding',
        index,
        embedding: base64 ? float32Base64(vector) : vector,
      })),
      model: target.model.id,
      usage: {
        prompt_tokens: tokens,
        total_tokens: tokens,
        ...(inputTokens === undefined ? { estimated: true as const } : {}),
      },
    },
  };
}
