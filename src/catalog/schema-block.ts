import { z } from 'zod';
import { endpointOf } from './capabilities.ts';
import { examplesFor } from './examples.ts';
import { QuirksRecord } from './record.ts';
import { sdkSnippets } from './sdk.ts';
import type { CatalogModel } from './types.ts';

export const SchemaBlock = z.object({
  endpoint: z.object({ method: z.enum(['GET', 'POST']), path: z.string(), url: z.string() }),
  quirks: QuirksRecord,
  /** JSON of a minimal valid request for this model. */
  request_example: z.string(),
  /** JSON of its answer (or a note, for binary answers). */
  response_example: z.string(),
  /** The answer as it streams (SSE lines, or WebSocket messages); null where the endpoint does not stream. */
  streaming_example: z.string().nullable(),
  sdk: z.object({ curl: z.string(), python: z.string(), typescript: z.string() }),
});
export type SchemaBlock = z.infer<typeof SchemaBlock>;

/** How to call a model through the gateway, generated from its catalog entry alone. */
export function schemaBlock(model: CatalogModel, baseUrl: string): SchemaBlock {
  const base = baseUrl.replace(/\/+$/, '');
  const { method, path } = endpointOf(model.capabilities);
  const endpoint = { method, path, url: `${base}${path}` };
  const examples = examplesFor(model);
  return {
    endpoint,
    quirks: { ...model.quirks },
    request_example: JSON.stringify(examples.request, null, 2),
    response_example:
      typeof examples.response === 'string' ? examples.response : JSON.stringify(examples.response, null, 2),
    streaming_example: examples.stream,
    sdk: sdkSnippets(model.capabilities[0] ?? 'chat', endpoint, base, examples.request),
  };
}
