import type { IncomingHttpHeaders } from 'node:http';
import WebSocket from 'ws';
import type { Json } from '../support/json.ts';

/** A stream that was opened: every message the gateway sent, in order, and the close code. */
export interface Streamed {
  messages: Json[];
  code: number;
  headers: IncomingHttpHeaders;
}

/** The gateway answered the handshake with an HTTP error instead of opening the stream. */
export class HandshakeRefused extends Error {
  constructor(readonly status: number) {
    super(`the handshake was refused with ${status}`);
  }
}

/**
 * Opens `GET /v1/realtime` on `base` (an http: URL) with the query, sends the audio in frames as fast as the socket
 * takes them, then `CloseStream`, and resolves once the gateway closes the socket. With `dropAfter`, the client
 * sends that many bytes and goes away without a word (code 1006). A refused handshake rejects with HandshakeRefused.
 */
export function streamAudio(
  base: string,
  query: Record<string, string>,
  audio: Buffer,
  options: { headers?: Record<string, string>; frame?: number; dropAfter?: number } = {},
): Promise<Streamed> {
  const frame = options.frame ?? 16_000;
  const url = `${base.replace(/^http/, 'ws')}/v1/realtime?${new URLSearchParams(query)}`;
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers: options.headers });
    const messages: Json[] = [];
    let headers: IncomingHttpHeaders = {};
    socket.on('upgrade', (response) => {
      headers = response.headers;
    });
    socket.on('unexpected-response', (_request, response) => {
      response.resume();
      reject(new HandshakeRefused(response.statusCode ?? 0));
    });
    socket.on('error', reject);
    socket.on('open', () => {
      const end = Math.min(audio.length, options.dropAfter ?? audio.length);
      for (let at = 0; at < end; at += frame) socket.send(audio.subarray(at, Math.min(at + frame, end)));
      if (options.dropAfter === undefined) socket.send(JSON.stringify({ type: 'CloseStream' }));
      else socket.terminate();
    });
    socket.on('message', (data) => messages.push(JSON.parse(data.toString())));
    socket.on('close', (code) => resolve({ messages, code, headers }));
  });
}
