import { UpstreamError } from '../errors.ts';

type Part = Record<string, unknown>;
export interface Content {
  role: 'user' | 'model';
  parts: Part[];
}

interface ChatMessage {
  role: string;
  content?: unknown;
  name?: string;
  tool_call_id?: string;
  tool_calls?: ToolCall[];
}

interface ToolCall {
  id?: string;
  function?: { name?: string; arguments?: string };
  /** Where Google's own OpenAI-compatible endpoint carries a function call's thought signature. */
  extra_content?: { google?: { thought_signature?: string } };
}

/** Google serves these by file URI; anything else is guessed to be an image of the commonest kind. */
const MIME_BY_EXTENSION: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  heic: 'image/heic',
  heif: 'image/heif',
  pdf: 'application/pdf',
};

function imagePart(url: string): Part {
  const inline = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s.exec(url);
  if (inline) return { inlineData: { mimeType: inline[1], data: inline[2] } };
  const path = url.split(/[?#]/)[0] ?? '';
  const extension = /\.([a-z0-9]+)$/i.exec(path)?.[1]?.toLowerCase() ?? '';
  return { fileData: { mimeType: MIME_BY_EXTENSION[extension] ?? 'image/jpeg', fileUri: url } };
}

/** Text and image parts; Gemini rejects an empty text part, so none is made. */
function parts(content: unknown): Part[] {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  if (!Array.isArray(content)) return [];
  return content.flatMap((part): Part[] => {
    const p = part as { type?: string; text?: string; image_url?: { url?: string } | string };
    if (p.type === 'text' && typeof p.text === 'string' && p.text !== '') return [{ text: p.text }];
    if (p.type === 'image_url') {
      const url = typeof p.image_url === 'string' ? p.image_url : p.image_url?.url;
      return url ? [imagePart(url)] : [];
    }
    return [];
  });
}

function plainText(content: unknown): string {
  return parts(content)
    .flatMap((p) => (typeof p.text === 'string' ? [p.text] : []))
    .join('\n');
}

function functionCall(call: ToolCall): Part {
  let args: unknown = {};
  try {
    args = JSON.parse(call.function?.arguments || '{}');
  } catch {
    args = { arguments: call.function?.arguments };
  }
  // Gemini's `args` is a JSON object (a protobuf Struct), never a bare value.
  const object = typeof args === 'object' && args !== null && !Array.isArray(args) ? args : { value: args };
  const signature = call.extra_content?.google?.thought_signature;
  return {
    functionCall: { name: call.function?.name, args: object },
    ...(signature && { thoughtSignature: signature }),
  };
}

/** Gemini wants turns that alternate; consecutive ones of one role (parallel tool results) become one. */
function push(contents: Content[], role: Content['role'], added: Part[]): void {
  if (added.length === 0) return;
  const last = contents.at(-1);
  if (last?.role === role) last.parts.push(...added);
  else contents.push({ role, parts: added });
}

/** Chat messages as Gemini's `systemInstruction` and `contents`. */
export function toGeminiContents(messages: unknown[]): {
  systemInstruction: { parts: Part[] } | undefined;
  contents: Content[];
} {
  const system: Part[] = [];
  const contents: Content[] = [];
  // A functionResponse names its function, where a tool message only names the call: walking in order, the
  // latest call with that id is the one answered (ids may repeat across turns).
  const callNames = new Map<string, string>();
  for (const raw of messages) {
    const m = raw as ChatMessage;
    switch (m.role) {
      case 'system':
      case 'developer':
        system.push(...parts(m.content).filter((p) => typeof p.text === 'string'));
        break;
      case 'user':
        push(contents, 'user', parts(m.content));
        break;
      case 'assistant': {
        const calls = m.tool_calls ?? [];
        for (const call of calls)
          if (call.id && call.function?.name) callNames.set(call.id, call.function.name);
        push(contents, 'model', [...parts(m.content), ...calls.map(functionCall)]);
        break;
      }
      case 'tool':
      case 'function': {
        const name = (m.tool_call_id && callNames.get(m.tool_call_id)) || m.name;
        if (!name) {
          throw new UpstreamError(
            'client',
            `tool message ${m.tool_call_id ?? ''} answers no earlier tool call`,
          );
        }
        push(contents, 'user', [{ functionResponse: { name, response: { content: plainText(m.content) } } }]);
        break;
      }
      default:
        break;
    }
  }
  return { systemInstruction: system.length > 0 ? { parts: system } : undefined, contents };
}
