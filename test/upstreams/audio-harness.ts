import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RecordedRequest, Script, Upstream } from './types.ts';

/** A multipart file part as the simulator received it. */
export interface ReceivedFile {
  filename: string;
  type: string;
  bytes: Buffer;
}

/**
 * A request with a binary-safe body: JSON parsed, multipart split into fields and files, anything else kept as
 * bytes. (The JSON simulators' harness reads bodies as UTF-8 text, which would mangle audio.)
 */
export interface AudioIncoming {
  seq: number;
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  json: unknown;
  invalidJson: boolean;
  fields: Record<string, string[]>;
  files: Record<string, ReceivedFile>;
  raw: Buffer;
}

export type AudioReply =
  | { status: number; headers?: Record<string, string>; body: unknown }
  | { status: number; headers: Record<string, string>; chunks: Buffer[] };

export interface AudioProvider {
  handle(request: AudioIncoming): AudioReply;
  errorReply(status: number): AudioReply;
  rateLimited(retryAfterSeconds: number): AudioReply;
}

/**
 * The plumbing of the audio simulators: recording (`body` is the JSON, or `{fields, files}` for multipart with
 * each file's name, type and size, or `{bytes, sha}` for a raw body), the script queue and its failure modes.
 */
export async function startAudioUpstream(provider: AudioProvider): Promise<Upstream> {
  const requests: RecordedRequest[] = [];
  const queue: Script[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let seq = 0;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  const server = createServer((req, res) => {
    res.on('error', () => {});
    serve(req, res, seq++).catch(() => res.destroy());
  });

  async function serve(req: IncomingMessage, res: ServerResponse, n: number): Promise<void> {
    const incoming = await readRequest(req, n);
    // The gateway asks for model lists at start and on a schedule: this simulator has none (the gateway then counts
    // the provider's models available), and the asks are neither recorded nor given a script.
    if (incoming.method === 'GET' && /\/models$/.test(incoming.path))
      return send(res, provider.errorReply(404));
    requests.push(record(incoming));
    const script = queue.shift() ?? { kind: 'ok' };
    switch (script.kind) {
      case 'hang':
        return;
      case 'error': {
        const reply =
          script.body === undefined
            ? provider.errorReply(script.status)
            : { status: script.status, body: script.body };
        return send(res, { ...reply, headers: { ...reply.headers, ...script.headers } } as AudioReply);
      }
      case 'rate_limited':
        return send(res, provider.rateLimited(script.retryAfterSeconds));
      case 'slow_first_byte':
        await sleep(script.ms);
        return send(res, provider.handle(incoming));
      case 'disconnect_mid_stream':
        return send(res, provider.handle(incoming), { disconnectAfter: script.afterChunks });
      case 'ok':
        return send(res, provider.handle(incoming), { chunkDelayMs: script.chunkDelayMs });
    }
  }

  async function send(
    res: ServerResponse,
    reply: AudioReply,
    options: { disconnectAfter?: number; chunkDelayMs?: number } = {},
  ): Promise<void> {
    if ('chunks' in reply) {
      res.writeHead(reply.status, reply.headers);
      res.flushHeaders();
      for (const [i, chunk] of reply.chunks.entries()) {
        if (i === options.disconnectAfter) return void res.socket?.destroy();
        if (i > 0 && options.chunkDelayMs) await sleep(options.chunkDelayMs);
        if (res.destroyed) return;
        await new Promise((resolve) => res.write(chunk, resolve));
      }
      res.end();
      return;
    }
    const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
    res.writeHead(reply.status, {
      'content-type': typeof reply.body === 'string' ? 'text/plain; charset=utf-8' : 'application/json',
      ...reply.headers,
      'content-length': String(Buffer.byteLength(text)),
    });
    res.end(text);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    script: (next) => void queue.push(next),
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function record(incoming: AudioIncoming): RecordedRequest {
  const { method, path, query, headers, json, fields, files, raw } = incoming;
  let body: unknown;
  if (Object.keys(fields).length > 0 || Object.keys(files).length > 0) {
    body = {
      fields,
      files: Object.fromEntries(
        Object.entries(files).map(([name, f]) => [
          name,
          { filename: f.filename, type: f.type, bytes: f.bytes.length },
        ]),
      ),
    };
  } else if (json !== undefined) {
    body = json;
  } else if (raw.length > 0) {
    body = { bytes: raw.length };
  }
  return { method, path, query, headers, body };
}

async function readRequest(req: IncomingMessage, seq: number): Promise<AudioIncoming> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  const raw = Buffer.concat(parts);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  const url = new URL(req.url ?? '/', 'http://upstream');
  const type = headers['content-type'] ?? '';
  const fields: Record<string, string[]> = {};
  const files: Record<string, ReceivedFile> = {};
  let json: unknown;
  let invalidJson = false;
  if (type.startsWith('multipart/form-data')) {
    const form = await new Response(raw, { headers: { 'content-type': type } }).formData();
    for (const [name, value] of form.entries()) {
      if (typeof value === 'string') fields[name] = [...(fields[name] ?? []), value];
      else
        files[name] = {
          filename: value.name,
          type: value.type,
          bytes: Buffer.from(await value.arrayBuffer()),
        };
    }
  } else if (type.startsWith('application/json')) {
    try {
      json = JSON.parse(raw.toString('utf8'));
    } catch {
      invalidJson = true;
    }
  }
  return {
    seq,
    method: req.method ?? 'GET',
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers,
    json,
    invalidJson,
    fields,
    files,
    raw,
  };
}
