import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';

/**
 * Deepgram's live transcription API (`wss://api.deepgram.com/v1/listen`), as documented: `Authorization: Token <key>`,
 * the options in the query, binary audio in, `Results` out (interim ones when `interim_results=true`, a final one for
 * each whole second of audio), `KeepAlive`/`Finalize`/`CloseStream` text messages, and after `CloseStream` the last
 * results, one `Metadata` and a normal close. A refused handshake is an HTTP error with the reason in `dg-error`;
 * a failure mid-stream is a close frame (1011 with a NET- reason). The transcript is made up from the audio's
 * timing: "audio from 1.00 to 2.00 seconds".
 *
 * Duration: raw encodings by their size (sample rate, channels, sample width); anything else as if it were a
 * 32 kbit/s stream (4,000 bytes a second), or at the rate a script gives (audio coded more sparsely).
 */
export const DEEPGRAM_KEY = 'upstream-deepgram';
export const LIVE_MODELS = ['nova-3', 'nova-2', 'nova', 'enhanced', 'base'];
const ENCODINGS = [
  'linear16',
  'linear32',
  'flac',
  'alaw',
  'mulaw',
  'amr-nb',
  'amr-wb',
  'opus',
  'ogg-opus',
  'speex',
  'g729',
];
const SAMPLE_BYTES: Record<string, number> = { linear16: 2, linear32: 4, mulaw: 1, alaw: 1 };
export const COMPRESSED_BYTES_PER_SECOND = 4000;

export type LiveScript =
  /** A normal stream; `codedBytesPerSecond` reckons compressed or container audio at that rate instead. */
  | { kind: 'ok'; codedBytesPerSecond?: number }
  /** The handshake is refused with this status. */
  | { kind: 'refuse'; status: number; reason: string }
  /** The stream breaks (1011) once this much audio has arrived. */
  | { kind: 'drop'; afterMs: number };

export interface LiveStream {
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  bytes: number;
  /** Text messages the client sent, in order. */
  controls: string[];
  /** Milliseconds of audio received, as the simulator reckons it. */
  receivedMs(): number;
}

export interface DeepgramLiveUpstream {
  /** The base URL, as DEEPGRAM_BASE_URL takes it (http:, no /v1). */
  url: string;
  streams: LiveStream[];
  script(next: LiveScript): void;
  close(): Promise<void>;
}

/**
 * `codedBytesPerSecond`: the rate at which this server reckons compressed or container audio (default 4,000);
 * `keys`: the API keys it accepts (default `DEEPGRAM_KEY` alone), any other is refused with a 401.
 */
export async function startDeepgramLiveUpstream(
  options: { codedBytesPerSecond?: number; keys?: string[] } = {},
): Promise<DeepgramLiveUpstream> {
  const codedRate = options.codedBytesPerSecond ?? COMPRESSED_BYTES_PER_SECOND;
  const keys = options.keys ?? [DEEPGRAM_KEY];
  const streams: LiveStream[] = [];
  const queue: LiveScript[] = [];
  const sockets = new WebSocketServer({ noServer: true });
  const server = createServer((_req, res) => {
    res.writeHead(405).end();
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => {});
    const url = new URL(req.url ?? '/', 'http://sim');
    const query = Object.fromEntries(url.searchParams);
    const refusal = handshakeRefusal(url.pathname, req.headers.authorization, query, keys);
    const script = refusal ? { kind: 'ok' as const } : (queue.shift() ?? { kind: 'ok' as const });
    const refused =
      refusal ?? (script.kind === 'refuse' ? { status: script.status, reason: script.reason } : null);
    if (refused) return refuse(socket, refused.status, refused.reason);
    sockets.handleUpgrade(req, socket, head, (ws) => {
      const stream = new SimStream(
        ws,
        query,
        req.headers,
        script.kind === 'drop' ? script.afterMs : undefined,
        (script.kind === 'ok' && script.codedBytesPerSecond) || codedRate,
      );
      streams.push(stream.record);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    streams,
    script: (next) => queue.push(next),
    async close() {
      for (const client of sockets.clients) client.terminate();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

function handshakeRefusal(
  path: string,
  authorization: string | undefined,
  query: Record<string, string>,
  keys: string[],
): { status: number; reason: string } | null {
  if (path !== '/v1/listen') return { status: 404, reason: 'Not Found' };
  if (!keys.some((key) => authorization === `Token ${key}`))
    return { status: 401, reason: 'Invalid credentials.' };
  if (query.model !== undefined && !LIVE_MODELS.includes(query.model)) {
    return { status: 400, reason: 'No such model/language/tier combination found.' };
  }
  if (query.encoding !== undefined && !ENCODINGS.includes(query.encoding)) {
    return { status: 400, reason: `Invalid encoding: ${query.encoding}` };
  }
  if (query.encoding !== undefined && query.sample_rate === undefined) {
    return { status: 400, reason: 'sample_rate is required when encoding is specified' };
  }
  return null;
}

function refuse(socket: Duplex, status: number, reason: string): void {
  const body = JSON.stringify({
    err_code: status === 401 ? 'INVALID_AUTH' : 'Bad Request',
    err_msg: reason,
    request_id: randomUUID(),
  });
  socket.end(
    `HTTP/1.1 ${status} ${status === 401 ? 'Unauthorized' : 'Bad Request'}\r\ncontent-type: application/json\r\n` +
      `dg-error: ${reason}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

class SimStream {
  readonly record: LiveStream;
  private readonly bytesPerSecond: number;
  private finalMs = 0;
  private lastInterimMs = 0;
  private closed = false;

  constructor(
    private readonly ws: WebSocket,
    private readonly query: Record<string, string>,
    headers: Record<string, string | string[] | undefined>,
    private readonly dropAfterMs: number | undefined,
    codedBytesPerSecond: number,
  ) {
    const sampleBytes = SAMPLE_BYTES[query.encoding ?? ''];
    this.bytesPerSecond = sampleBytes
      ? sampleBytes * Number(query.sample_rate) * Number(query.channels ?? 1)
      : codedBytesPerSecond;
    const record: LiveStream = {
      query,
      headers,
      bytes: 0,
      controls: [],
      receivedMs: () => Math.round((record.bytes * 1000) / this.bytesPerSecond),
    };
    this.record = record;
    ws.on('error', () => {});
    ws.on('message', (data, isBinary) => {
      if (this.closed) return;
      const buffer = data as Buffer;
      if (isBinary) this.audio(buffer.length);
      else this.control(buffer.toString());
    });
  }

  private audio(length: number): void {
    this.record.bytes += length;
    const received = this.record.receivedMs();
    if (this.dropAfterMs !== undefined && received >= this.dropAfterMs) {
      this.closed = true;
      this.ws.close(1011, 'NET-0000: The service has encountered an internal error.');
      return;
    }
    while (received - this.finalMs >= 1000) this.results(this.finalMs, this.finalMs + 1000, true);
    const interim = this.query.interim_results === 'true';
    if (interim && received - this.finalMs >= 500 && this.lastInterimMs < this.finalMs + 500) {
      this.lastInterimMs = this.finalMs + 500;
      this.results(this.finalMs, this.finalMs + 500, false);
    }
  }

  private control(text: string): void {
    this.record.controls.push(text);
    const type = (JSON.parse(text) as { type?: string }).type;
    const received = this.record.receivedMs();
    if (type === 'Finalize' || type === 'CloseStream') {
      if (received > this.finalMs) this.results(this.finalMs, received, true);
    }
    if (type !== 'CloseStream') return;
    this.closed = true;
    this.ws.send(
      JSON.stringify({
        type: 'Metadata',
        transaction_key: 'deprecated',
        request_id: randomUUID(),
        sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
        created: new Date().toISOString(),
        duration: received / 1000,
        channels: Number(this.query.channels ?? 1),
      }),
    );
    this.ws.close(1000);
  }

  private results(fromMs: number, toMs: number, isFinal: boolean): void {
    if (isFinal) this.finalMs = toMs;
    const start = fromMs / 1000;
    const end = toMs / 1000;
    this.ws.send(
      JSON.stringify({
        type: 'Results',
        channel_index: [0, 1],
        duration: end - start,
        start,
        is_final: isFinal,
        speech_final: isFinal,
        channel: {
          alternatives: [
            {
              transcript: `audio from ${start.toFixed(2)} to ${end.toFixed(2)} seconds`,
              confidence: 0.99,
              words: [],
            },
          ],
        },
        metadata: { request_id: 'sim', model_info: { name: this.query.model ?? 'base' } },
        from_finalize: false,
      }),
    );
  }
}
