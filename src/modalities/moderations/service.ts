import { randomBytes } from 'node:crypto';
import { type ModalityDeps, pricedCall, type RequestContext, type Served } from '../../pipeline/priced.ts';
import { countAll, inputTokensLine, worstCaseTokens } from '../estimate.ts';
import { defaultModelId, resolveModalityModel } from '../models.ts';
import { moderationsEndpoint, PREFERRED_MODERATION_MODELS } from './endpoint.ts';
import type { ModerationsRequest, ModerationsResponse } from './request.ts';

/** Classifies the inputs, billed per input token at the model's input price (zero for a free model). */
export async function createModerations(
  deps: ModalityDeps,
  context: RequestContext,
  body: ModerationsRequest,
): Promise<Served<ModerationsResponse>> {
  const id = body.model ?? defaultModelId(deps, moderationsEndpoint, PREFERRED_MODERATION_MODELS);
  const target = resolveModalityModel(deps, moderationsEndpoint, id);
  const price = target.model.prices.inputNanosPerMillion ?? 0n;
  const inputs = typeof body.input === 'string' ? [body.input] : body.input;
  const counted = await countAll(inputs);
  const served = await pricedCall(
    deps,
    context,
    target,
    [inputTokensLine(worstCaseTokens(counted, inputs.length), price)],
    (upstream) => target.adapter.moderate({ inputs, upstream, signal: context.signal }),
    (moderations) => {
      const tokens = moderations.inputTokens ?? counted;
      return {
        lines: [inputTokensLine(tokens, price)],
        usageReported: moderations.inputTokens !== undefined,
        units: tokens,
      };
    },
  );
  return {
    ...served,
    result: {
      id: served.result.id ?? `modr-${randomBytes(12).toString('hex')}`,
      model: target.model.id,
      results: served.result.results,
    },
  };
}
