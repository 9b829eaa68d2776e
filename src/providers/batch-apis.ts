import type { CatalogModel } from '../catalog/types.ts';
import type { BatchApi } from '../contracts/batch.ts';
import { anthropicBatch } from './anthropic/batch.ts';
import { geminiBatch } from './gemini/batch.ts';
import { openAiBatch } from './openai/batch.ts';

/** Providers with a batch API of their own, and the API family each is reached through. */
const BATCH_APIS: Readonly<Record<string, { api: CatalogModel['api']; batch: BatchApi }>> = {
  openai: { api: 'openai', batch: openAiBatch },
  anthropic: { api: 'anthropic', batch: anthropicBatch },
  google: { api: 'gemini', batch: geminiBatch },
};

export const BATCH_API_PROVIDERS: readonly string[] = Object.keys(BATCH_APIS);

/** The provider's own batch API for a chat model, or undefined when it has none. */
export function batchApiOf(model: CatalogModel): BatchApi | undefined {
  const entry = Object.hasOwn(BATCH_APIS, model.provider) ? BATCH_APIS[model.provider] : undefined;
  return entry && entry.api === model.api ? entry.batch : undefined;
}
