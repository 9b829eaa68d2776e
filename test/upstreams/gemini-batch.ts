import { BatchBook, type BatchUpstream, replyJson, type SimBatch } from './batch-sim.ts';
import { geminiProvider } from './gemini.ts';
import { type Incoming, type Reply, startUpstream } from './harness.ts';

const STATE = {
  running: 'BATCH_STATE_RUNNING',
  cancelling: 'BATCH_STATE_RUNNING',
  completed: 'BATCH_STATE_SUCCEEDED',
  failed: 'BATCH_STATE_FAILED',
  expired: 'BATCH_STATE_EXPIRED',
  cancelled: 'BATCH_STATE_CANCELLED',
} as const;

/**
 * Gemini's chat simulator plus batch mode, as Google documents it: `POST /v1beta/models/{model}:batchGenerateContent`
 * with inline requests (`batch.input_config.requests.requests[]`, each `{request, metadata: {key}}`), the
 * long-running operation `GET /v1beta/batches/{id}` (responses inline once done), `GET /v1beta/batches` and
 * `POST /v1beta/batches/{id}:cancel`.
 */
export async function startGeminiBatchUpstream(): Promise<BatchUpstream> {
  const book = new BatchBook(geminiProvider);
  const models = new Map<string, string>();

  const operation = (batch: SimBatch) => {
    const done = batch.state !== 'running' && batch.state !== 'cancelling';
    const inlined = batch.requests.flatMap((request): unknown[] => {
      const reply = batch.replies.get(request.key);
      if (!reply) return [];
      const { status, body } = replyJson(reply);
      const metadata = { key: request.key };
      if (status < 400) return [{ response: body, metadata }];
      return [{ error: { code: status, message: JSON.stringify(body) }, metadata }];
    });
    return {
      name: batch.id,
      metadata: {
        '@type': 'type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch',
        model: models.get(batch.id),
        displayName: batch.name,
        state: STATE[batch.state],
        name: batch.id,
      },
      ...(done && { done: true }),
      ...(batch.state === 'failed' && { error: { code: 400, message: batch.message ?? 'failed' } }),
      ...(done &&
        batch.state !== 'failed' && {
          response: {
            '@type': 'type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatchOutput',
            inlinedResponses: { inlinedResponses: inlined },
          },
        }),
    };
  };

  const handle = (request: Incoming): Reply => {
    const { method, path } = request;
    const notFound = {
      status: 404,
      body: { error: { code: 404, message: `Not found: ${path}`, status: 'NOT_FOUND' } },
    };
    const create = /^\/v1beta\/models\/([^/:]+):batchGenerateContent$/.exec(path);
    if (method === 'POST' && create) {
      const model = create[1] as string;
      const body = request.body as {
        batch?: {
          display_name?: string;
          input_config?: { requests?: { requests?: { request: unknown; metadata?: { key?: string } }[] } };
        };
      };
      const inline = body.batch?.input_config?.requests?.requests;
      if (!Array.isArray(inline)) return notFound;
      const requests = inline.map((r, index) => ({
        key: r.metadata?.key ?? String(index),
        call: { path: `/v1beta/models/${model}:generateContent`, body: r.request },
      }));
      const batch = book.create('batches/sim', body.batch?.display_name, requests);
      models.set(batch.id, `models/${model}`);
      return { status: 200, body: operation(batch) };
    }
    if (method === 'GET' && path === '/v1beta/batches') {
      return { status: 200, body: { operations: [...book.batches.values()].map(operation) } };
    }
    const one = /^\/v1beta\/(batches\/[^/:]+)(:cancel)?$/.exec(path);
    if (one) {
      const batch = book.batches.get(one[1] as string);
      if (!batch) return notFound;
      if (one[2] && method === 'POST') {
        book.cancel(batch);
        return { status: 200, body: {} };
      }
      if (method === 'GET') return { status: 200, body: operation(book.look(batch.id) as SimBatch) };
    }
    return geminiProvider.handle(request);
  };

  const upstream = await startUpstream({ ...geminiProvider, handle });
  return { ...upstream, batches: book };
}
