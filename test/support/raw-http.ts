import { connect } from 'node:net';

export interface RawResponse {
  /** 0 when nothing that looks like a response came back. */
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Whether the server closed the connection before `waitMs` ran out. */
  closed: boolean;
  /** Everything the server sent, every response included. */
  raw: string;
  /** From the first byte sent to the server's close (or to the wait's end). */
  ms: number;
}

export interface RawOptions {
  /** How long to wait for the server to close; the answer so far is returned after it. */
  waitMs?: number;
  /** Written again every `everyMs` after the request, until the server closes: a slow client. */
  drip?: { bytes: string; everyMs: number };
  /** Half-closes the connection after the request (the client has nothing more to send). */
  end?: boolean;
}

/**
 * Writes bytes exactly as given on a fresh TCP connection (what fetch would normalise: wrong lengths, odd
 * headers, a dripping body) and reads the first response back.
 */
export function rawRequest(
  url: string,
  request: string | Buffer,
  options: RawOptions = {},
): Promise<RawResponse> {
  const { hostname, port } = new URL(url);
  const started = Date.now();
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const received: Buffer[] = [];
    let drip: NodeJS.Timeout | undefined;
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearInterval(drip);
      clearTimeout(timer);
      socket.destroy();
      const raw = Buffer.concat(received).toString('utf8');
      resolve({ ...parseResponse(raw), raw, closed, ms: Date.now() - started });
    };
    const timer = setTimeout(() => finish(false), options.waitMs ?? 3000);
    socket.on('data', (chunk) => received.push(chunk));
    socket.on('close', () => finish(true));
    // A reset after the answer (the server closed with unread bytes) still counts as closed.
    socket.on('error', () => finish(true));
    socket.write(request);
    if (options.end) socket.end();
    if (options.drip) {
      const { bytes, everyMs } = options.drip;
      drip = setInterval(() => {
        if (!socket.destroyed && socket.writable) socket.write(bytes);
      }, everyMs);
    }
  });
}

export function parseResponse(text: string): Omit<RawResponse, 'raw' | 'closed' | 'ms'> {
  const end = text.indexOf('\r\n\r\n');
  const match = /^HTTP\/1\.1 (\d{3})/.exec(text);
  if (end < 0 || !match) return { status: 0, headers: {}, body: text };
  const headers: Record<string, string> = {};
  for (const line of text.slice(0, end).split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = text.slice(end + 4);
  if (headers['transfer-encoding'] === 'chunked') body = unchunk(body);
  else if (headers['content-length']) body = body.slice(0, Number(headers['content-length']));
  return { status: Number(match[1]), headers, body };
}

function unchunk(text: string): string {
  let out = '';
  let rest = text;
  for (;;) {
    const line = rest.indexOf('\r\n');
    const size = Number.parseInt(rest.slice(0, line), 16);
    if (!(size > 0)) return out;
    out += rest.slice(line + 2, line + 2 + size);
    rest = rest.slice(line + 4 + size);
  }
}

/** A request with its headers, CRLF-joined, as a client would frame it. */
export function frame(method: string, path: string, headers: Record<string, string>, body = ''): string {
  const lines = [
    `${method} ${path} HTTP/1.1`,
    'Host: 127.0.0.1',
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ];
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}
