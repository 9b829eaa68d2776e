import { BatchBook, type BatchUpstream, replyJson, type SimBatch } from './batch-sim.ts';
import { type Incoming, type Reply, startUpstream } from './harness.ts';
import { openAiProvider } from './openai.ts';

/**
 * OpenAI's chat simulator plus its Files and Batch APIs, as OpenAI documents them: `POST /v1/files` (multipart,
 * purpose `batch`), `POST /v1/batches`, `GET /v1/batches[/{id}]`, `POST /v1/batches/{id}/cancel` and
 * `GET /v1/files/{id}/content`. A batch's lines are answered by the chat simulator when it ends.
 */
export async function startOpenAiBatchUpstream(): Promise<BatchUpstream> {
  const book = new BatchBook(openAiProvider);
  const files = new Map<string, { text: string; filename: string; purpose: string }>();
  let fileSeq = 0;

  const keep = (text: string, filename: string, purpose: string) => {
    const id = `file-sim${String(++fileSeq).padStart(6, '0')}`;
    files.set(id, { text, filename, purpose });
    return id;
  };

  /** The Batch object; an ended batch's output and error files are written the first time it is shown so. */
  const shown = new Map<string, { output: string | null; error: string | null }>();
  const view = (batch: SimBatch) => {
    const status = batch.state === 'running' ? 'in_progress' : batch.state;
    let written = shown.get(batch.id);
    if (!written && batch.state !== 'running' && batch.state !== 'cancelling') {
      written = writeResults(batch, keep);
      shown.set(batch.id, written);
    }
    const served = [...batch.replies.values()];
    const completed = served.filter((reply) => reply.status < 400).length;
    return {
      id: batch.id,
      object: 'batch',
      endpoint: '/v1/chat/completions',
      errors:
        batch.state === 'failed'
          ? {
              object: 'list',
              data: [
                { code: 'invalid_request', message: batch.message ?? 'failed', line: null, param: null },
              ],
            }
          : null,
      input_file_id: 'file-sim-input',
      completion_window: '24h',
      status,
      output_file_id: written?.output ?? null,
      error_file_id: written?.error ?? null,
      created_at: batch.createdAt,
      request_counts: {
        total: batch.requests.length,
        completed,
        failed: batch.state === 'running' ? 0 : batch.requests.length - completed,
      },
      metadata: batch.name === undefined ? null : { gateway_batch: batch.name },
    };
  };

  const handle = (request: Incoming): Reply => {
    const { method, path } = request;
    const notFound = {
      status: 404,
      body: { error: { message: `No such object: ${path}`, type: 'invalid_request_error' } },
    };
    if (method === 'POST' && path === '/v1/files') {
      const form = multipart(request);
      if (!form.file || form.purpose !== 'batch')
        return {
          status: 400,
          body: { error: { message: "'purpose' and 'file' are required", type: 'invalid_request_error' } },
        };
      const id = keep(form.file.text, form.file.filename, 'batch');
      return {
        status: 200,
        body: {
          id,
          object: 'file',
          bytes: form.file.text.length,
          created_at: 0,
          filename: form.file.filename,
          purpose: 'batch',
        },
      };
    }
    const content = /^\/v1\/files\/([^/]+)\/content$/.exec(path);
    if (method === 'GET' && content) {
      const file = files.get(content[1] as string);
      return file
        ? { status: 200, headers: { 'content-type': 'application/octet-stream' }, body: file.text }
        : notFound;
    }
    if (method === 'POST' && path === '/v1/batches') {
      const body = request.body as {
        input_file_id?: string;
        endpoint?: string;
        metadata?: Record<string, string>;
      };
      const input = body.input_file_id ? files.get(body.input_file_id) : undefined;
      if (!input || body.endpoint !== '/v1/chat/completions') return notFound;
      const requests = input.text
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as { custom_id: string; body: unknown })
        .map((line) => ({ key: line.custom_id, call: { path: '/v1/chat/completions', body: line.body } }));
      const created = book.create('batch_sim', body.metadata?.gateway_batch, requests);
      if (book.replyLost())
        return { status: 500, body: { error: { message: 'The server had an error', type: 'server_error' } } };
      return { status: 200, body: view(created) };
    }
    if (method === 'GET' && path === '/v1/batches') {
      const data = [...book.batches.values()].reverse().map(view);
      return { status: 200, body: { object: 'list', data, has_more: false } };
    }
    const one = /^\/v1\/batches\/([^/]+)(\/cancel)?$/.exec(path);
    if (one) {
      const batch = book.batches.get(one[1] as string);
      if (!batch) return notFound;
      if (one[2] && method === 'POST') {
        book.cancel(batch);
        return { status: 200, body: view(batch) };
      }
      if (method === 'GET') return { status: 200, body: view(book.look(batch.id) as SimBatch) };
    }
    return openAiProvider.handle(request);
  };

  const upstream = await startUpstream({ ...openAiProvider, handle });
  return { ...upstream, batches: book };
}

/** OpenAI's output file (answered lines) and error file (refused, expired and cancelled ones). */
function writeResults(batch: SimBatch, keep: (text: string, name: string, purpose: string) => string) {
  const output: string[] = [];
  const errors: string[] = [];
  for (const [index, request] of batch.requests.entries()) {
    const reply = batch.replies.get(request.key);
    const id = `batch_req_sim${index}`;
    if (reply) {
      const { status, body } = replyJson(reply);
      const line = JSON.stringify({
        id,
        custom_id: request.key,
        response: { status_code: status, request_id: `req_${index}`, body },
        error: null,
      });
      (status < 400 ? output : errors).push(line);
    } else if (batch.state === 'expired' || batch.state === 'cancelled') {
      const code = batch.state === 'expired' ? 'batch_expired' : 'batch_cancelled';
      errors.push(
        JSON.stringify({
          id,
          custom_id: request.key,
          response: null,
          error: { code, message: `This request was ${batch.state}.` },
        }),
      );
    }
  }
  const file = (lines: string[], kind: string) =>
    lines.length === 0 ? null : keep(`${lines.join('\n')}\n`, `${batch.id}_${kind}.jsonl`, 'batch_output');
  return { output: file(output, 'output'), error: file(errors, 'error') };
}

/** The parts of a multipart/form-data body: text fields, and the file part with its name. */
function multipart(request: Incoming): { purpose?: string; file?: { text: string; filename: string } } {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(request.headers['content-type'] ?? '');
  const text = typeof request.body === 'string' ? request.body : '';
  if (!boundary) return {};
  const out: { purpose?: string; file?: { text: string; filename: string } } = {};
  for (const part of text.split(`--${boundary[1] ?? boundary[2]}`)) {
    const split = part.indexOf('\r\n\r\n');
    if (split < 0) continue;
    const head = part.slice(0, split);
    const value = part.slice(split + 4).replace(/\r\n$/, '');
    const name = /name="([^"]+)"/.exec(head)?.[1];
    const filename = /filename="([^"]*)"/.exec(head)?.[1];
    if (name === 'purpose') out.purpose = value;
    if (name === 'file') out.file = { text: value, filename: filename ?? 'file' };
  }
  return out;
}
