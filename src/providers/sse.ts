import type { SseEvent } from '../contracts/messages.ts';

export type { SseEvent };

/**
 * Server-sent events from a byte stream, yielded as each event completes (a blank line), so nothing is held
 * back waiting for more. Handles CRLF, multi-line data and comment lines.
 */
export async function* parseSse(body: AsyncIterable<Uint8Array | string>): AsyncIterable<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let event: string | undefined;
  let data: string[] = [];
  for await (const piece of body) {
    buffer += typeof piece === 'string' ? piece : decoder.decode(piece, { stream: true });
    let newline = buffer.search(/\r?\n/);
    while (newline >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(buffer[newline] === '\r' ? newline + 2 : newline + 1);
      if (line === '') {
        if (data.length > 0) yield { event, data: data.join('\n') };
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
}
