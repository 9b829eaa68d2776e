import { z } from 'zod';
import type { ModelListCall } from '../../contracts/model-list.ts';
import { endpointUrl, getUpstream } from '../http.ts';
import { parseReply } from '../reply.ts';

const Entry = z.object({ id: z.string() });
// OpenAI's `{object: "list", data: [...]}`; Together answers the bare array.
const Reply = z.union([z.object({ data: z.array(Entry) }), z.array(Entry)]);

/**
 * `GET {base}/models` of OpenAI and the OpenAI-compatible providers: `{object: "list", data: [{id, object:
 * "model", created, owned_by}]}`, the models the key can use, in one page.
 */
export async function listOpenAiModels(call: ModelListCall): Promise<string[]> {
  const response = await getUpstream({
    url: endpointUrl(call.baseUrl, '/models'),
    headers: { authorization: `Bearer ${call.apiKey}` },
    timeoutMs: call.timeoutMs,
    signal: call.signal,
  });
  const reply = await parseReply(response, Reply, 'a model list');
  return (Array.isArray(reply) ? reply : reply.data).map((entry) => entry.id);
}
