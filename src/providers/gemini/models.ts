import { z } from 'zod';
import type { ModelListCall } from '../../contracts/model-list.ts';
import { UpstreamError } from '../errors.ts';
import { endpointUrl, getUpstream } from '../http.ts';
import { parseReply } from '../reply.ts';

/** Google's largest page; a list needing more pages than this is not a model list. */
const PAGE_SIZE = 1000;
const MAX_PAGES = 20;

const Reply = z.object({
  // An empty list comes without the field at all.
  models: z.array(z.object({ name: z.string() })).optional(),
  nextPageToken: z.string().optional(),
});

/**
 * `models.list` of the Gemini API, `GET {base}/v1beta/models`, paged by `pageToken` / `nextPageToken`:
 * `{models: [{name: "models/gemini-2.5-flash", supportedGenerationMethods, ...}]}`. Names lose their `models/`.
 */
export async function listGeminiModels(call: ModelListCall): Promise<string[]> {
  const ids: string[] = [];
  let token: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const query = new URLSearchParams({ pageSize: String(PAGE_SIZE), ...(token && { pageToken: token }) });
    const response = await getUpstream({
      url: endpointUrl(call.baseUrl, `/v1beta/models?${query}`),
      headers: { 'x-goog-api-key': call.apiKey },
      timeoutMs: call.timeoutMs,
      signal: call.signal,
    });
    const reply = await parseReply(response, Reply, 'a model list');
    ids.push(...(reply.models ?? []).map((model) => model.name.replace(/^models\//, '')));
    if (!reply.nextPageToken) return ids;
    token = reply.nextPageToken;
  }
  throw new UpstreamError('server', `the provider's model list ran past ${MAX_PAGES} pages`);
}
