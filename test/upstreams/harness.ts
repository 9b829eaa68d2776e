import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ModelListState } from './model-list.ts';
import type { ModelBehaviour, RecordedRequest, Script, Upstream } from './types.ts';

/** The credential a request carries: a bearer token (OpenAI's, Gemini's keys aside) or Anthropic's x-api-key. */
function keyOf(headers: Record<string, string>): string {
  return (
    headers.authorization?.replace(/^Bearer\s+/i, '') ??
    headers['x-api-key'] ??
    headers['x-goog-api-key'] ??
    ''
  );
}

/** A whole reply: a JSON (or raw text) body, or a body written chunk by chunk. */
export type Reply = (
  | { status: number; headers?: Record<string, string>; body: unknown }
  | { status: number; headers: Record<string, string>; chunks: string[] }
) & {
  /** How long the simulated provider works before it answers (a slow composition, say). */
  delayMs?: number;
};

export interface Incoming extends RecordedRequest {
  /** 0 for the first request this upstream saw; simulators build ids from it. */
  seq: number;
  /** Set when the body was not valid JSON. */
  invalidJson: boolean;
  /** The behaviour set for the body's model, if any. */
  behaviour?: ModelBehaviour;
}

export interface Provider {
  handle(request: Incoming): Reply;
  /** The provider's model list, for a request to its list endpoint; undefined for any other request. */
  listModels?(request: Incoming, list: ModelListState): Reply | undefined;
  /** The API family whose catalog ids the list offers by default. */
  family?: 'openai' | 'anthropic' | 'gemini';
  /** The provider's own error body for a bare scripted status. */
  errorReply(status: number, seq: number): Reply;
  rateLimited(retryAfterSeconds: number, seq: number): Reply;
}

/** The HTTP plumbing the three simulators share: recording, the script queue and the scripted failure modes. */
export async function startUpstream(provider: Provider): Promise<Upstream> {
  const requests: RecordedRequest[] = [];
  const queue: Script[] = [];
  const behaviours = new Map<string, ModelBehaviour>();
  const byKey = new Map<string, Script>();
  const list = new ModelListState(provider.family ?? 'openai');
  let seq = 0;
  let connections = 0;
  const timers = new Set<NodeJS.Timeout>();
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  const server = createServer((req, res) => {
    // A client that hangs up mid-write must not crash the simulator.
    res.on('error', () => {});
    serve(req, res, seq++).catch(() => res.destroy());
  });

  async function serve(req: IncomingMessage, res: ServerResponse, seq: number): Promise<void> {
    const incoming = await readRequest(req, seq);
    // The gateway asks for model lists at start and on a schedule: never recorded, never given a script.
    const listed = provider.listModels?.(incoming, list);
    if (listed) return send(res, listed);
    if (incoming.method === 'GET' && /\/models$/.test(incoming.path)) {
      return send(res, provider.errorReply(404, incoming.seq));
    }
    const { seq: _seq, invalidJson: _invalid, ...recorded } = incoming;
    requests.push(recorded);
    const script = byKey.get(keyOf(incoming.headers)) ?? queue.shift() ?? { kind: 'ok' };
    const model = (incoming.body as { model?: unknown } | undefined)?.model;
    const behaviour = typeof model === 'string' ? behaviours.get(model) : undefined;
    if (behaviour) {
      incoming.behaviour = behaviour;
      if (behaviour.delayMs) await sleep(behaviour.delayMs);
    }
    switch (script.kind) {
      case 'hang':
        return; // close() destroys the socket; until then the client waits.
      case 'error': {
        const reply =
          script.body === undefined
            ? provider.errorReply(script.status, incoming.seq)
            : { status: script.status, body: script.body };
        return send(res, { ...reply, headers: { ...reply.headers, ...script.headers } });
      }
      case 'rate_limited':
        return send(res, provider.rateLimited(script.retryAfterSeconds, incoming.seq));
      case 'slow_first_byte':
        await sleep(script.ms);
        return send(res, provider.handle(incoming));
      case 'disconnect_mid_stream':
        return send(res, provider.handle(incoming), { disconnectAfter: script.afterChunks });
      case 'ok':
        return send(res, provider.handle(incoming), {
          chunkDelayMs: script.chunkDelayMs,
          endDelayMs: script.endDelayMs,
        });
    }
  }

  async function send(
    res: ServerResponse,
    reply: Reply,
    options: { disconnectAfter?: number; chunkDelayMs?: number; endDelayMs?: number } = {},
  ): Promise<void> {
    if (reply.delayMs) await sleep(reply.delayMs);
    if (res.destroyed) return;
    const { disconnectAfter, chunkDelayMs, endDelayMs } = options;
    if ('chunks' in reply) {
      res.writeHead(reply.status, reply.headers);
      res.flushHeaders();
      for (const [i, chunk] of reply.chunks.entries()) {
        if (i === disconnectAfter) return void res.socket?.destroy();
        if (i > 0 && chunkDelayMs) await sleep(chunkDelayMs);
        if (!(await write(res, chunk))) return;
      }
      if (disconnectAfter !== undefined) return void res.socket?.destroy();
      if (endDelayMs) await sleep(endDelayMs);
      res.end();
      return;
    }
    const raw = typeof reply.body === 'string';
    const text = raw ? (reply.body as string) : JSON.stringify(reply.body);
    const type = raw ? 'text/plain; charset=utf-8' : 'application/json';
    res.writeHead(reply.status, {
      'content-type': type,
      ...reply.headers,
      'content-length': String(Buffer.byteLength(text)),
    });
    if (disconnectAfter === undefined) return void res.end(text);
    // A plain JSON body has no chunks: cut it halfway, so the declared length is never met.
    await write(res, text.slice(0, Math.floor(text.length / 2)));
    res.socket?.destroy();
  }

  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    script: (next) => void queue.push(next),
    behave: (model, behaviour) => void behaviours.set(model, behaviour),
    scriptKey: (key, script) => void (script ? byKey.set(key, script) : byKey.delete(key)),
    connections: () => connections,
    ...(provider.listModels && { models: list }),
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Resolves once the chunk is handed to the kernel, so a later destroy cannot swallow it; false if the socket is gone. */
function write(res: ServerResponse, chunk: string): Promise<boolean> {
  if (res.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => res.write(chunk, (error) => resolve(!error)));
}

async function readRequest(req: IncomingMessage, seq: number): Promise<Incoming> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  const text = Buffer.concat(parts).toString('utf8');
  let body: unknown;
  let invalidJson = false;
  if (text !== '') {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
      invalidJson = true;
    }
  }
  const url = new URL(req.url ?? '/', 'http://upstream');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return {
    method: req.method ?? 'GET',
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers,
    body,
    seq,
    invalidJson,
  };
}

/** One SSE event in the `event:`/`data:` framing; `eol` lets Gemini use CRLF as Google's servers do. */
export function sse(data: unknown, event?: string, eol = '\n'): string {
  const payload = typeof data === 'string' ? data : JSON.stringify(data);
  return `${event ? `event: ${event}${eol}` : ''}data: ${payload}${eol}${eol}`;
}
