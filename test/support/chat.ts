import { json } from './json.ts';

export interface ChatCall {
  status: number;
  headers: Headers;
  body: ReturnType<typeof json> extends Promise<infer T> ? T : never;
}

/** One chat completion through HTTP, as any client of the chat-completions format would send it. */
export async function chat(
  url: string,
  key: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<ChatCall> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'local/echo', ...body }),
  });
  return { status: response.status, headers: response.headers, body: await json(response) };
}

export const say = (text: string) => ({ messages: [{ role: 'user', content: text }] });
