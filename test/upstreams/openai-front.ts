import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OpenAiFront {
  url: string;
  close(): Promise<void>;
}

export interface Backend {
  /** Requests whose path starts with this go to `url`, with the prefix replaced by `as` (default: kept). */
  prefix: string;
  url: string;
  as?: string;
  /**
   * Answer as the compatible crowd does (Groq, Mistral, ...): chat completions without OpenAI's null `logprobs` and
   * `refusal`. Whole JSON answers only.
   */
  leanChat?: boolean;
}

/**
 * One OpenAI base address over several simulators, as OpenAI serves chat, embeddings, images and audio under one:
 * each request goes to the first backend whose path prefix it starts with. A `…/v1/models` request is answered
 * here, listing `models` in OpenAI's shape, so a gateway that asks which models the key can use sees them all.
 */
export async function startOpenAiFront(backends: Backend[], models: string[]): Promise<OpenAiFront> {
  const server = createServer((req, res) => {
    res.on('error', () => {});
    const path = req.url ?? '/';
    if (req.method === 'GET' && path.split('?')[0]?.endsWith('/v1/models')) {
      const data = models.map((id) => ({ id, object: 'model', created: 1_700_000_000, owned_by: 'system' }));
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ object: 'list', data }));
      return;
    }
    const backend = backends.find((b) => path.startsWith(b.prefix));
    if (!backend) {
      const error = { message: `Invalid URL (${req.method} ${path})`, type: 'invalid_request_error' };
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error }));
      return;
    }
    forward(
      req,
      res,
      new URL((backend.as ?? backend.prefix) + path.slice(backend.prefix.length), backend.url),
      backend,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function forward(req: IncomingMessage, res: ServerResponse, target: URL, backend: Backend): void {
  const headers = { ...req.headers, host: target.host };
  const forwarded = request(target, { method: req.method, headers }, async (answer) => {
    const json = answer.headers['content-type']?.includes('application/json');
    if (!backend.leanChat || !json) {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of answer) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    for (const choice of body.choices ?? []) {
      delete choice.logprobs;
      delete choice.message?.refusal;
    }
    const { 'content-length': _length, ...rest } = answer.headers;
    res.writeHead(answer.statusCode ?? 502, rest).end(JSON.stringify(body));
  });
  forwarded.on('error', () => res.destroy());
  req.pipe(forwarded);
}
