import { keyParts } from './key.ts';

/** The text of a message's content: a string, or the text parts of a list; undefined when it holds anything else. */
function textOf(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const texts: string[] = [];
  for (const part of content as { type?: unknown; text?: unknown }[]) {
    if (part?.type !== 'text' || typeof part.text !== 'string') return undefined;
    texts.push(part.text);
  }
  return texts.join('\n');
}

/**
 * What a semantic lookup compares, for a request that may have one: single-turn (one user message, after at most
 * one system or developer prompt), no tools. The group is everything but the user message (the model, every
 * parameter, the system prompt verbatim), so only requests that differ in their question can share an answer.
 */
export function semanticPrompt(
  kind: string,
  model: string,
  body: Record<string, unknown> & { messages: unknown[] },
): { group: Record<string, unknown>; text: string } | undefined {
  if (body.tools !== undefined || body.functions !== undefined || body.tool_choice !== undefined)
    return undefined;
  const messages = body.messages as { role?: unknown; content?: unknown }[];
  const last = messages.at(-1);
  const prompt = messages.slice(0, -1);
  if (last?.role !== 'user' || prompt.length > 1) return undefined;
  if (prompt.length === 1 && prompt[0]?.role !== 'system' && prompt[0]?.role !== 'developer')
    return undefined;
  const text = textOf(last.content);
  if (text === undefined || text.trim() === '') return undefined;
  const { messages: _question, ...rest } = body;
  return { group: keyParts(`${kind}:semantic`, model, { ...rest, system: prompt[0] ?? null }), text };
}
