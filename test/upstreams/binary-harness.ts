import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { crc32, deflateSync } from 'node:zlib';
import type { RecordedRequest, Script, Upstream } from './types.ts';

/**
 * Plumbing for simulators whose requests or answers are binary (multipart uploads, image bytes), which the JSON
 * harness (harness.ts) reads as text. A multipart request is recorded as its text fields plus, under `files`, each
 * file's name, type and size; a JSON request as its parsed body.
 */

export interface UploadedFile {
  filename: string;
  type: string;
  bytes: Buffer;
}

export interface BinaryIncoming {
  seq: number;
  method: string;
  path: string;
  headers: Record<string, string>;
  /** Parsed JSON body, or undefined. */
  json: unknown;
  invalidJson: boolean;
  /** Text fields and files of a multipart/form-data body. */
  fields: Record<string, string>;
  files: Record<string, UploadedFile>;
  multipart: boolean;
}

export type BinaryReply =
  | { status: number; headers?: Record<string, string>; body: unknown }
  | { status: number; headers?: Record<string, string>; bytes: Buffer };

export interface BinaryProvider {
  handle(request: BinaryIncoming): BinaryReply;
  errorReply(status: number): BinaryReply;
  rateLimited(retryAfterSeconds: number): BinaryReply;
}

/** A multipart file as the recorded body shows it. */
export interface RecordedFile {
  filename: string;
  type: string;
  size: number;
}

export async function startBinaryUpstream(provider: BinaryProvider): Promise<Upstream> {
  const requests: RecordedRequest[] = [];
  const queue: Script[] = [];
  let seq = 0;
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
    res.on('error', () => {});
    serve(req, res, seq++).catch(() => res.destroy());
  });

  async function serve(req: IncomingMessage, res: ServerResponse, n: number): Promise<void> {
    const incoming = await readRequest(req, n);
    // The gateway asks for model lists at start and on a schedule: this simulator has none (the gateway then counts
    // the provider's models available), and the asks are neither recorded nor given a script.
    if (incoming.method === 'GET' && /\/models$/.test(incoming.path))
      return send(res, provider.errorReply(404));
    const files = Object.fromEntries(
      Object.entries(incoming.files).map(([name, f]) => [
        name,
        { filename: f.filename, type: f.type, size: f.bytes.length } satisfies RecordedFile,
      ]),
    );
    const url = new URL(req.url ?? '/', 'http://upstream');
    requests.push({
      method: incoming.method,
      path: incoming.path,
      query: Object.fromEntries(url.searchParams),
      headers: incoming.headers,
      body: incoming.multipart ? { ...incoming.fields, files } : incoming.json,
    });
    // Bytes the simulator serves itself (result URLs) never take a script.
    const script = incoming.method === 'GET' ? { kind: 'ok' as const } : (queue.shift() ?? { kind: 'ok' });
    switch (script.kind) {
      case 'hang':
        return;
      case 'error': {
        const reply =
          script.body === undefined
            ? provider.errorReply(script.status)
            : { status: script.status, body: script.body };
        return send(res, { ...reply, headers: { ...reply.headers, ...script.headers } });
      }
      case 'rate_limited':
        return send(res, provider.rateLimited(script.retryAfterSeconds));
      case 'slow_first_byte':
        await sleep(script.ms);
        return send(res, provider.handle(incoming));
      default:
        return send(res, provider.handle(incoming));
    }
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

function send(res: ServerResponse, reply: BinaryReply): void {
  if (res.destroyed) return;
  const bytes = 'bytes' in reply ? reply.bytes : Buffer.from(JSON.stringify(reply.body));
  res.writeHead(reply.status, {
    'content-type': 'bytes' in reply ? 'image/png' : 'application/json',
    ...reply.headers,
    'content-length': String(bytes.length),
  });
  res.end(bytes);
}

async function readRequest(req: IncomingMessage, seq: number): Promise<BinaryIncoming> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  const raw = Buffer.concat(parts);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  const incoming: BinaryIncoming = {
    seq,
    method: req.method ?? 'GET',
    path: new URL(req.url ?? '/', 'http://upstream').pathname,
    headers,
    json: undefined,
    invalidJson: false,
    fields: {},
    files: {},
    multipart: (headers['content-type'] ?? '').startsWith('multipart/form-data'),
  };
  if (incoming.multipart) {
    // The platform's own multipart parser (undici's), as a server framework would use one.
    const form = await new Response(raw, {
      headers: { 'content-type': headers['content-type'] ?? '' },
    }).formData();
    for (const [name, value] of form.entries()) {
      if (typeof value === 'string') incoming.fields[name] = value;
      else {
        const file = value as File;
        incoming.files[name] = {
          filename: file.name,
          type: file.type,
          bytes: Buffer.from(await file.arrayBuffer()),
        };
      }
    }
  } else if (raw.length > 0) {
    try {
      incoming.json = JSON.parse(raw.toString('utf8'));
    } catch {
      incoming.invalidJson = true;
    }
  }
  return incoming;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

/** A valid 1×1 PNG carrying `text` in a tEXt chunk: tests tell images apart by it. */
export function png(text: string): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(1, 0);
  header.writeUInt32BE(1, 4);
  header.set([8, 6, 0, 0, 0], 8);
  const pixels = deflateSync(Buffer.from([0, 255, 0, 0, 255]));
  return Buffer.concat([
    PNG_SIGNATURE,
    chunk('IHDR', header),
    chunk('tEXt', Buffer.from(`Comment\0${text}`, 'latin1')),
    chunk('IDAT', pixels),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

export const isPng = (bytes: Buffer) => bytes.subarray(0, 8).equals(PNG_SIGNATURE);
