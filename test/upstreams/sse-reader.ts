import type { Json } from '../support/json.ts';

export interface SseEvent {
  event: string | undefined;
  data: string;
}

/** Splits an SSE body into events, accepting LF or CRLF line ends as the SSE spec does. */
export function parseSse(text: string): SseEvent[] {
  return text
    .split(/\r?\n\r?\n/)
    .filter((block) => block.trim() !== '')
    .map((block) => {
      let event: string | undefined;
      const data: string[] = [];
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
      }
      return { event, data: data.join('\n') };
    });
}

/** The JSON payloads of an SSE body, minus OpenAI's [DONE] sentinel. */
export function sseJson(text: string): Json[] {
  return parseSse(text)
    .filter((e) => e.data !== '[DONE]')
    .map((e) => JSON.parse(e.data));
}

/** Reads a body to its end or to the connection dropping; returns what arrived and the failure, if any. */
export async function readAll(response: Response): Promise<{ text: string; failure: unknown }> {
  const reader = response.body?.getReader();
  const decoder = new TextDecoder();
  let text = '';
  if (!reader) return { text, failure: undefined };
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text: text + decoder.decode(), failure: undefined };
      text += decoder.decode(value, { stream: true });
    }
  } catch (failure) {
    return { text, failure };
  }
}
