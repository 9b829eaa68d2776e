import type { SseEvent } from '../contracts/messages.ts';

export type { SseEvent };

type Body = AsyncIterable<Uint8Array | string> & { destroy?: (error?: Error) => unknown };

export interface SseOptions {
  /**
   * The provider's last event (`[DONE]`, `message_stop`). Once it is read, the rest of the body is drained
   * rather than destroyed when the reader stops: destroying a response whose end has not arrived yet closes its
   * connection, and the next call to the provider would pay a new TCP and TLS handshake.
   */
  final?: (event: SseEvent) => boolean;
}

/** OpenAI's format ends a stream with `data: [DONE]`. */
export const isDone = (event: SseEvent): boolean => event.data === '[DONE]';

/** How much a provider may send after its last event, and for how long, before the connection is given up. */
const DRAIN_LIMIT_BYTES = 64 * 1024;
const DRAIN_LIMIT_MS = 5_000;

/**
 * Server-sent events from a byte stream, yielded as each event completes (a blank line), so nothing is held
 * back waiting for more. Handles CRLF, multi-line data and comment lines.
 */
export async function* parseSse(body: Body, options: SseOptions = {}): AsyncIterable<SseEvent> {
  const decoder = new TextDecoder();
  const source = body[Symbol.asyncIterator]();
  let buffer = '';
  let event: string | undefined;
  let data: string[] = [];
  let ended = false;
  let finalSeen = false;
  try {
    for (;;) {
      const next = await source.next();
      if (next.done) {
        ended = true;
        break;
      }
      const piece = next.value;
      buffer += typeof piece === 'string' ? piece : decoder.decode(piece, { stream: true });
      let newline = buffer.search(/\r?\n/);
      while (newline >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(buffer[newline] === '\r' ? newline + 2 : newline + 1);
        if (line === '') {
          if (data.length > 0) {
            const complete = { event, data: data.join('\n') };
            if (options.final?.(complete)) finalSeen = true;
            yield complete;
          }
          event = undefined;
          data = [];
        } else if (!line.startsWith(':')) {
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'data') data.push(value);
          else if (field === 'event') event = value;
        }
        newline = buffer.search(/\r?\n/);
      }
    }
    if (data.length > 0) yield { event, data: data.join('\n') };
  } finally {
    if (!ended) {
      if (finalSeen) drain(body, source);
      else await source.return?.();
    }
  }
}

/** Reads what follows the last event to the body's end, in the background, within the limits above. */
function drain(body: Body, source: AsyncIterator<Uint8Array | string>): void {
  const giveUp = () => {
    if (body.destroy) body.destroy();
    else void source.return?.()?.catch(() => {});
  };
  const timer = setTimeout(giveUp, DRAIN_LIMIT_MS);
  timer.unref();
  void (async () => {
    let bytes = 0;
    try {
      for (;;) {
        const next = await source.next();
        if (next.done) return;
        bytes += next.value.length;
        if (bytes > DRAIN_LIMIT_BYTES) return giveUp();
      }
    } catch {
      // A body destroyed or failed after its last event: the answer was complete, nothing is lost.
    } finally {
      clearTimeout(timer);
    }
  })();
}
