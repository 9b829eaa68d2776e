/**
 * The bench's upstream: a minimal OpenAI-format server, as cheap as a Node HTTP server can be, so that what the
 * bench measures is the gateway in front of it. `POST /v1/chat/completions` answers a fixed tiny completion,
 * or, when the body asks for `"stream": true`, a short SSE stream (role, two content deltas, finish, the usage
 * chunk when `include_usage` is asked, `[DONE]`). `GET /stats` counts the completions served.
 *
 * Run as its own process: `node --import tsx bench/simulator.ts`, with
 *   SIM_PORT        port to listen on (0: any free one; the chosen port is printed as `listening <port>`)
 *   SIM_LATENCY_MS  a fixed wait before the response starts (default 0)
 *   SIM_CHUNK_MS    a fixed wait between streamed chunks (default 0: the whole stream in one write)
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

const latencyMs = Number(process.env.SIM_LATENCY_MS ?? 0);
const chunkMs = Number(process.env.SIM_CHUNK_MS ?? 0);
const created = Math.floor(Date.now() / 1000);

const usage = {
  prompt_tokens: 8,
  completion_tokens: 3,
  total_tokens: 11,
  prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
  completion_tokens_details: {
    reasoning_tokens: 0,
    audio_tokens: 0,
    accepted_prediction_tokens: 0,
    rejected_prediction_tokens: 0,
  },
};

// Replies are made once per model and the id written in when sent: a new id per completion, as OpenAI gives, so
// the gateway's request log stores a new response body each time, as in real traffic (one fixed id made every
// answer one body, stored once).
const ID = 'chatcmpl-bench';
let ids = 0;
const newId = () => `${ID}${(++ids).toString(36)}`;
const withNewId = (reply: string, id = newId()) => reply.replaceAll(ID, id);

const completion = (model: string) =>
  JSON.stringify({
    id: ID,
    object: 'chat.completion',
    created,
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: 'Hello there!', refusal: null, annotations: [] },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage,
    service_tier: 'default',
    system_fingerprint: 'fp_bench',
  });

function streamChunks(model: string, includeUsage: boolean): string[] {
  const base = { id: ID, object: 'chat.completion.chunk', created, model };
  const choice = (delta: object, finish: string | null = null) => ({
    index: 0,
    delta,
    logprobs: null,
    finish_reason: finish,
  });
  const extra = includeUsage ? { usage: null } : {};
  const chunks = [
    { ...base, choices: [choice({ role: 'assistant', content: '', refusal: null })], ...extra },
    { ...base, choices: [choice({ content: 'Hello' })], ...extra },
    { ...base, choices: [choice({ content: ' there!' })], ...extra },
    { ...base, choices: [choice({}, 'stop')], ...extra },
    ...(includeUsage ? [{ ...base, choices: [], usage }] : []),
  ];
  return [...chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`), 'data: [DONE]\n\n'];
}

// The replies are built once per model name (the bench sends one or two), not per request.
const jsonReplies = new Map<string, string>();
const streamReplies = new Map<string, string[]>();

const MODEL = /"model"\s*:\s*"([^"]{1,200})"/;
const STREAM = /"stream"\s*:\s*true/;
const INCLUDE_USAGE = /"include_usage"\s*:\s*true/;

let served = 0;

function answer(body: string, res: ServerResponse): void {
  served++;
  const model = MODEL.exec(body)?.[1] ?? 'gpt-4o-mini';
  if (!STREAM.test(body)) {
    let reply = jsonReplies.get(model);
    if (!reply) {
      reply = completion(model);
      jsonReplies.set(model, reply);
    }
    const sent = withNewId(reply);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(sent) });
    res.end(sent);
    return;
  }
  const includeUsage = INCLUDE_USAGE.test(body);
  const key = `${includeUsage ? 'u' : '-'}${model}`;
  let chunks = streamReplies.get(key);
  if (!chunks) {
    chunks = streamChunks(model, includeUsage);
    streamReplies.set(key, chunks);
  }
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  if (chunkMs <= 0) {
    res.end(withNewId(chunks.join('')));
    return;
  }
  let i = 0;
  const id = newId();
  const next = () => {
    if (res.destroyed) return;
    const chunk = withNewId(chunks[i++] as string, id);
    if (i >= chunks.length) res.end(chunk);
    else {
      res.write(chunk);
      setTimeout(next, chunkMs);
    }
  };
  next();
}

const server = createServer({ keepAliveTimeout: 60_000 }, (req: IncomingMessage, res: ServerResponse) => {
  if (req.method === 'GET' && req.url === '/stats') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ served }));
    return;
  }
  if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
    req.resume();
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":{"message":"not found","type":"invalid_request_error"}}');
    return;
  }
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (part: string) => {
    body += part;
  });
  req.on('end', () => {
    if (latencyMs > 0) setTimeout(answer, latencyMs, body, res);
    else answer(body, res);
  });
});
server.headersTimeout = 0;
server.requestTimeout = 0;
server.listen(Number(process.env.SIM_PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : 0}\n`);
});
const stop = () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
