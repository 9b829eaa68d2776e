import { anthropicProvider } from './anthropic.ts';
import { BatchBook, type BatchUpstream, replyJson, type SimBatch } from './batch-sim.ts';
import { type Incoming, type Reply, startUpstream } from './harness.ts';

/**
 * Anthropic's chat simulator plus Message Batches, as Anthropic documents them: `POST /v1/messages/batches`
 * (`{requests: [{custom_id, params}]}`), `GET /v1/messages/batches/{id}`, `POST …/{id}/cancel`, and the results
 * as JSONL at the batch's `results_url` once `processing_status` is `ended`.
 */
export async function startAnthropicBatchUpstream(): Promise<BatchUpstream> {
  const book = new BatchBook(anthropicProvider);

  const view = (batch: SimBatch, host: string | undefined) => {
    const ended = batch.state !== 'running' && batch.state !== 'cancelling';
    const served = [...batch.replies.values()];
    const succeeded = served.filter((reply) => reply.status < 400).length;
    return {
      id: batch.id,
      type: 'message_batch',
      processing_status: ended ? 'ended' : batch.state === 'cancelling' ? 'canceling' : 'in_progress',
      request_counts: {
        processing: ended ? 0 : batch.requests.length,
        succeeded,
        errored: served.length - succeeded,
        canceled: batch.state === 'cancelled' ? batch.requests.length - served.length : 0,
        expired: batch.state === 'expired' ? batch.requests.length - served.length : 0,
      },
      ended_at: ended ? new Date().toISOString() : null,
      created_at: new Date(batch.createdAt * 1000).toISOString(),
      expires_at: new Date((batch.createdAt + 86_400) * 1000).toISOString(),
      cancel_initiated_at: null,
      archived_at: null,
      results_url: ended ? `http://${host}/v1/messages/batches/${batch.id}/results` : null,
    };
  };

  const results = (batch: SimBatch): string =>
    batch.requests
      .map((request) => {
        const reply = batch.replies.get(request.key);
        if (!reply) {
          const type = batch.state === 'cancelled' ? 'canceled' : 'expired';
          return JSON.stringify({ custom_id: request.key, result: { type } });
        }
        const { status, body } = replyJson(reply);
        if (status < 400)
          return JSON.stringify({ custom_id: request.key, result: { type: 'succeeded', message: body } });
        return JSON.stringify({ custom_id: request.key, result: { type: 'errored', error: body } });
      })
      .map((line) => `${line}\n`)
      .join('');

  const handle = (request: Incoming): Reply => {
    const { method, path } = request;
    const notFound = {
      status: 404,
      body: { type: 'error', error: { type: 'not_found_error', message: `Not found: ${path}` } },
    };
    if (method === 'POST' && path === '/v1/messages/batches') {
      const body = request.body as { requests?: { custom_id: string; params: unknown }[] };
      if (!Array.isArray(body?.requests)) return notFound;
      const requests = body.requests.map((r) => ({
        key: r.custom_id,
        call: { path: '/v1/messages', body: r.params },
      }));
      const created = book.create('msgbatch_sim', undefined, requests);
      if (book.replyLost())
        return {
          status: 500,
          body: { type: 'error', error: { type: 'api_error', message: 'Internal server error' } },
        };
      return { status: 200, body: view(created, request.headers.host) };
    }
    const one = /^\/v1\/messages\/batches\/([^/]+)(\/cancel|\/results)?$/.exec(path);
    if (one) {
      const batch = book.batches.get(one[1] as string);
      if (!batch) return notFound;
      if (one[2] === '/cancel' && method === 'POST') {
        book.cancel(batch);
        return { status: 200, body: view(batch, request.headers.host) };
      }
      if (one[2] === '/results' && method === 'GET') {
        if (batch.state === 'running' || batch.state === 'cancelling') return notFound;
        return { status: 200, headers: { 'content-type': 'application/binary' }, body: results(batch) };
      }
      if (!one[2] && method === 'GET')
        return { status: 200, body: view(book.look(batch.id) as SimBatch, request.headers.host) };
    }
    return anthropicProvider.handle(request);
  };

  const upstream = await startUpstream({ ...anthropicProvider, handle });
  return { ...upstream, batches: book };
}
