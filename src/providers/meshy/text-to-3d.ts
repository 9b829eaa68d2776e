import { z } from 'zod';
import type { JobAdapter, JobCall, Poll } from '../../contracts/jobs.ts';
import { guardedFetch } from '../../net/url-guard.ts';
import { UpstreamError } from '../errors.ts';
import { endpointUrl, getUpstream, postJson } from '../http.ts';
import { parseReply } from '../reply.ts';

const Created = z.object({ result: z.string() });
const Task = z.object({
  id: z.string(),
  status: z.enum(['PENDING', 'IN_PROGRESS', 'SUCCEEDED', 'FAILED', 'CANCELED', 'EXPIRED']),
  model_urls: z.object({ glb: z.string().optional() }).partial().optional(),
  task_error: z.object({ message: z.string().optional() }).nullable().optional(),
});

/** Meshy's API root; MESHY_BASE_URL replaces it. */
export const MESHY_BASE_URL = 'https://api.meshy.ai';

const auth = (call: JobCall) => ({ authorization: `Bearer ${call.upstream.apiKey}` });

/**
 * Meshy's text-to-3D (`/openapi/v2/text-to-3d`) in preview mode: a task id at once, then the task is polled
 * until SUCCEEDED, and the GLB is downloaded from the URL Meshy gives (on its asset host, fetched through the
 * URL guard since it is not the API's own origin).
 */
export const meshyTextTo3d: JobAdapter = {
  heldUnits: () => 1,
  async submit(call) {
    const { input, upstream } = call;
    const response = await postJson({
      url: endpointUrl(upstream.baseUrl, '/openapi/v2/text-to-3d'),
      headers: auth(call),
      body: { mode: 'preview', prompt: input.prompt, ai_model: upstream.model },
      timeoutMs: upstream.timeoutMs,
      signal: call.signal,
    });
    const created = await parseReply(response, Created, 'a task id');
    return { kind: 'submitted', providerJobId: created.result };
  },

  async poll(call, taskId): Promise<Poll> {
    const { upstream } = call;
    const response = await getUpstream({
      url: endpointUrl(upstream.baseUrl, `/openapi/v2/text-to-3d/${encodeURIComponent(taskId)}`),
      headers: auth(call),
      timeoutMs: upstream.timeoutMs,
      signal: call.signal,
    });
    const task = await parseReply(response, Task, 'a task');
    if (task.status === 'PENDING' || task.status === 'IN_PROGRESS') return { kind: 'pending' };
    if (task.status !== 'SUCCEEDED') {
      return {
        kind: 'failed',
        message: task.task_error?.message || `the provider's task ended ${task.status}`,
      };
    }
    const glb = task.model_urls?.glb;
    if (!glb) return { kind: 'failed', message: 'the provider returned no GLB model' };
    const asset = await guardedFetch(glb, {
      allowPrivate: call.allowPrivateUrls,
      signal: call.signal,
      timeoutMs: 300_000,
    });
    if (asset.status !== 200) {
      await asset.body.dump();
      throw new UpstreamError('server', `downloading the model answered ${asset.status}`);
    }
    return {
      kind: 'done',
      output: { file: { body: asset.body, filename: 'model.glb' }, units: 1, unitsReported: true },
    };
  },

  async cancel(call, taskId) {
    // Meshy has no cancel for text-to-3D tasks; deleting the task stops it and drops its assets.
    await postJson({
      method: 'DELETE',
      url: endpointUrl(call.upstream.baseUrl, `/openapi/v2/text-to-3d/${encodeURIComponent(taskId)}`),
      headers: auth(call),
      timeoutMs: call.upstream.timeoutMs,
      signal: call.signal,
    }).then((r) => r.body.text());
  },
};
