import WebSocket from 'ws';
import type { ModalityUpstream } from '../../contracts/modality.ts';
import type { LiveAdapter, LiveMessage, LiveOptions } from '../../contracts/realtime.ts';
import { failureOf, UpstreamError } from '../errors.ts';
import { deepgramEndpoint } from './api.ts';

/**
 * Deepgram's live transcription API (https://developers.deepgram.com/reference/speech-to-text/listen-streaming):
 * a WebSocket at `wss://api.deepgram.com/v1/listen?model=…&encoding=…&sample_rate=…`, authenticated with
 * `Authorization: Token <key>`. The client sends binary audio and the text messages `KeepAlive`, `Finalize` and
 * `CloseStream`; the server answers `Results` (`start`, `duration` in seconds, `is_final`, `speech_final`,
 * `channel.alternatives[0].transcript`) and, once the stream is closed, one `Metadata` (`request_id`, `duration`,
 * `channels`) before closing. A refused handshake is an HTTP error whose reason is in the `dg-error` header; a failure
 * mid-stream is a close frame (1008 for audio it cannot decode, 1011 for its own failures and for a stream that sent
 * no audio for 10 s) with the reason as its text.
 */

/** The listen URL as a ws(s) address (the base URL may be given as http(s) or ws(s)). */
export function listenUrl(upstream: ModalityUpstream, options: LiveOptions): string {
  const url = new URL(deepgramEndpoint(upstream, '/v1/listen').url.replace(/^http/, 'ws'));
  const query: [string, string | number | boolean | undefined][] = [
    ['model', upstream.model],
    ['encoding', options.encoding],
    ['sample_rate', options.sampleRate],
    ['channels', options.channels],
    ['interim_results', options.interimResults],
    ['language', options.language],
  ];
  for (const [name, value] of query) if (value !== undefined) url.searchParams.set(name, String(value));
  return url.toString();
}

/** Opens the stream; a refused or failed handshake is an UpstreamError. */
export function openLive(
  upstream: ModalityUpstream,
  options: LiveOptions,
  signal: AbortSignal,
): Promise<WebSocket> {
  const socket = new WebSocket(listenUrl(upstream, options), {
    headers: deepgramEndpoint(upstream, '/v1/listen').headers,
    handshakeTimeout: upstream.timeoutMs,
  });
  return new Promise((resolve, reject) => {
    let opened = false;
    // Once the stream is open its errors are the session's to handle; this listener stays so none goes unheard.
    const fail = (error: UpstreamError) => {
      if (opened) return;
      opened = true;
      signal.removeEventListener('abort', abort);
      socket.terminate();
      reject(error);
    };
    const abort = () => fail(new UpstreamError('network', 'the client went away'));
    signal.addEventListener('abort', abort, { once: true });
    socket.once('open', () => {
      if (opened) return;
      opened = true;
      signal.removeEventListener('abort', abort);
      resolve(socket);
    });
    socket.once('unexpected-response', (_request, response) => {
      const status = response.statusCode ?? 502;
      const reason = response.headers['dg-error'] ?? response.statusMessage ?? '';
      response.resume();
      fail(new UpstreamError(failureOf(status), `HTTP ${status} ${reason}`.trim(), status));
    });
    socket.on('error', (error) => {
      const timedOut = /timed out/i.test(error.message);
      fail(new UpstreamError(timedOut ? 'timeout' : 'network', error.message));
    });
  });
}

export function parseLiveMessage(text: string): LiveMessage {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return { type: 'other' };
  }
  if (typeof message !== 'object' || message === null) return { type: 'other' };
  const m = message as Record<string, unknown>;
  const seconds = (value: unknown) => (typeof value === 'number' && value >= 0 ? value : 0);
  if (m.type === 'Results') {
    return {
      type: 'Results',
      endMs: Math.round((seconds(m.start) + seconds(m.duration)) * 1000),
      isFinal: m.is_final === true,
    };
  }
  if (m.type === 'Metadata') return { type: 'Metadata', durationMs: Math.round(seconds(m.duration) * 1000) };
  return { type: 'other' };
}

/** How a close frame from Deepgram reads as a failure: 1008 is the client's audio, anything else the provider's. */
export function closeFailure(code: number, reason: string): UpstreamError {
  const text = `closed the stream (${code}${reason ? ` ${reason}` : ''})`;
  return new UpstreamError(code === 1008 ? 'client' : 'server', text, code);
}

export const deepgramLive: LiveAdapter = {
  open: openLive,
  parse: parseLiveMessage,
  closeFailure,
  closeMessage: JSON.stringify({ type: 'CloseStream' }),
};
