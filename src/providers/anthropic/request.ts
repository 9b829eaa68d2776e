import type { ChatBody, Upstream } from '../../contracts/chat.ts';

type Block = Record<string, unknown>;
interface Message {
  role: 'user' | 'assistant';
  content: Block[];
}

/** Thinking budgets for the spec's reasoning efforts (Anthropic takes a token budget, not a level). */
const THINKING_BUDGET: Record<string, number> = {
  low: 1024,
  medium: 4096,
  high: 16_384,
  xhigh: 32_768,
  max: 64_000,
};

const text = (value: string): Block => ({ type: 'text', text: value });

function contentBlocks(content: unknown): Block[] {
  if (typeof content === 'string') return content === '' ? [] : [text(content)];
  if (!Array.isArray(content)) return [];
  return content.flatMap((part): Block[] => {
    const p = part as { type?: string; text?: string; image_url?: { url?: string } | string };
    if (p.type === 'text' && typeof p.text === 'string') return [text(p.text)];
    if (p.type === 'image_url') {
      const url = typeof p.image_url === 'string' ? p.image_url : p.image_url?.url;
      if (!url) return [];
      const inline = /^data:([^;]+);base64,(.*)$/.exec(url);
      return [
        {
          type: 'image',
          source: inline ? { type: 'base64', media_type: inline[1], data: inline[2] } : { type: 'url', url },
        },
      ];
    }
    return [];
  });
}

function plainText(content: unknown): string {
  return contentBlocks(content)
    .filter((b) => b.type === 'text')
    .map((b) => b.text)
    .join('\n');
}

/** Anthropic wants strictly alternating roles; consecutive turns of one role become one message. */
function push(messages: Message[], role: Message['role'], blocks: Block[]): void {
  if (blocks.length === 0) return;
  const last = messages[messages.length - 1];
  if (last && last.role === role) last.content.push(...blocks);
  else messages.push({ role, content: blocks });
}

function toolChoice(choice: unknown): Block | undefined {
  if (choice === 'auto') return { type: 'auto' };
  if (choice === 'required') return { type: 'any' };
  if (choice === 'none') return { type: 'none' };
  const named = choice as { function?: { name?: string } } | undefined;
  return named?.function?.name ? { type: 'tool', name: named.function.name } : undefined;
}

/** A chat-completions request as an Anthropic Messages request. */
export function toAnthropicRequest(
  body: ChatBody,
  upstream: Upstream,
  stream: boolean,
): Record<string, unknown> {
  const system: string[] = [];
  const messages: Message[] = [];
  for (const raw of body.messages) {
    const m = raw as { role: string; content?: unknown; tool_calls?: unknown[]; tool_call_id?: string };
    switch (m.role) {
      case 'system':
      case 'developer':
        system.push(plainText(m.content));
        break;
      case 'user':
        push(messages, 'user', contentBlocks(m.content));
        break;
      case 'assistant': {
        const calls = (m.tool_calls ?? []).map((call) => {
          const c = call as { id?: string; function?: { name?: string; arguments?: string } };
          let input: unknown = {};
          try {
            input = JSON.parse(c.function?.arguments || '{}');
          } catch {
            input = { arguments: c.function?.arguments };
          }
          return { type: 'tool_use', id: c.id, name: c.function?.name, input };
        });
        push(messages, 'assistant', [...contentBlocks(m.content), ...calls]);
        break;
      }
      case 'tool':
      case 'function':
        push(messages, 'user', [
          { type: 'tool_result', tool_use_id: m.tool_call_id, content: plainText(m.content) },
        ]);
        break;
      default:
        break;
    }
  }
  const format = body.response_format as { type?: string; json_schema?: { schema?: unknown } } | undefined;
  // Anthropic has no JSON mode: the instruction travels in the system prompt instead.
  if (format?.type === 'json_object') system.push('Respond with a single JSON object and nothing else.');
  if (format?.type === 'json_schema') {
    system.push(
      `Respond with a single JSON object matching this JSON schema: ${JSON.stringify(format.json_schema?.schema ?? {})}`,
    );
  }
  const maxTokens = (body.max_completion_tokens ?? body.max_tokens) as number | undefined;
  const out: Record<string, unknown> = { model: upstream.model, messages, max_tokens: maxTokens ?? 4096 };
  if (system.some((s) => s !== '')) out.system = system.filter((s) => s !== '').join('\n\n');
  const effort =
    typeof body.reasoning_effort === 'string' ? THINKING_BUDGET[body.reasoning_effort] : undefined;
  const thinking = upstream.quirks.reasoning && effort !== undefined && (maxTokens ?? 4096) > 1024;
  if (thinking) {
    // The budget must stay below max_tokens, and thinking does not combine with sampling parameters.
    out.thinking = { type: 'enabled', budget_tokens: Math.min(effort, (maxTokens ?? 4096) - 1) };
  } else if (!upstream.quirks.noSampling) {
    if (typeof body.temperature === 'number') out.temperature = Math.min(1, body.temperature);
    if (typeof body.top_p === 'number') out.top_p = body.top_p;
  }
  if (body.stop !== undefined) out.stop_sequences = Array.isArray(body.stop) ? body.stop : [body.stop];
  if (Array.isArray(body.tools) && body.tools.length > 0) {
    out.tools = body.tools.map((tool) => {
      const f = (tool as { function?: { name?: string; description?: string; parameters?: unknown } })
        .function;
      return {
        name: f?.name,
        description: f?.description,
        input_schema: f?.parameters ?? { type: 'object' },
      };
    });
    const choice = toolChoice(body.tool_choice);
    if (choice) out.tool_choice = choice;
  }
  if (stream) out.stream = true;
  return out;
}
