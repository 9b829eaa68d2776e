import { z } from 'zod';
import type { ModelListCall } from '../../contracts/model-list.ts';
import { UpstreamError } from '../errors.ts';
import { endpointUrl, getUpstream } from '../http.ts';
import { parseReply } from '../reply.ts';

const VERSION = '2023-06-01';
/** Anthropic's largest page; a list needing more pages than this is not a model list. */
const PAGE_SIZE = 1000;
const MAX_PAGES = 20;

const Reply = z.object({
  data: z.array(z.object({ id: z.string() })),
  has_more: z.boolean(),
  last_id: z.string().nullable().optional(),
});

/**
 * `GET {base}/v1/models` of Anthropic, paged: `{data: [{type: "model", id, display_name, created_at}], has_more,
 * first_id, last_id}`, the next page asked `after_id` the last id. Anthropic lists snapshot ids
 * (`claude-sonnet-4-5-20250929`) and newer undated ones, not the aliases it also takes.
 */
export async function listAnthropicModels(call: ModelListCall): Promise<string[]> {
  const ids: string[] = [];
  let after: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const query = new URLSearchParams({ limit: String(PAGE_SIZE), ...(after && { after_id: after }) });
    const response = await getUpstream({
      url: endpointUrl(call.baseUrl, `/v1/models?${query}`),
      headers: { 'x-api-key': call.apiKey, 'anthropic-version': VERSION },
      timeoutMs: call.timeoutMs,
      signal: call.signal,
    });
    const reply = await parseReply(response, Reply, 'a model list');
    ids.push(...reply.data.map((entry) => entry.id));
    if (!reply.has_more) return ids;
    if (!reply.last_id) throw new UpstreamError('server', 'the provider said has_more without a last_id');
    after = reply.last_id;
  }
  throw new UpstreamError('server', `the provider's model list ran past ${MAX_PAGES} pages`);
}
