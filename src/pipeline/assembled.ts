interface ToolCall {
  id?: string;
  type?: string;
  function: { name: string; arguments: string };
}

interface Choice {
  index: number;
  text: string;
  reasoning: string;
  toolCalls: ToolCall[];
  finishReason: string | null;
}

/**
 * A streamed answer put back together for the request log: per choice its text, reasoning, tool calls and finish
 * reason, and the usage. Items that are not chat chunks (a native pass-through's events) are kept as they came.
 */
export class Assembled {
  private readonly choices = new Map<number, Choice>();
  private usage: unknown;
  private readonly other: unknown[] = [];
  private id: unknown;
  private model: unknown;

  add(item: unknown): void {
    const chunk = (item as { chunk?: { choices?: unknown; usage?: unknown } } | undefined)?.chunk;
    if (!chunk || !Array.isArray(chunk.choices)) {
      this.other.push(item);
      return;
    }
    const head = chunk as { id?: unknown; model?: unknown };
    this.id ??= head.id;
    this.model ??= head.model;
    if (chunk.usage) this.usage = chunk.usage;
    for (const raw of chunk.choices as Record<string, unknown>[]) this.addChoice(raw);
  }

  private addChoice(raw: Record<string, unknown>): void {
    const index = typeof raw.index === 'number' ? raw.index : 0;
    const choice = this.choices.get(index) ?? {
      index,
      text: '',
      reasoning: '',
      toolCalls: [],
      finishReason: null,
    };
    this.choices.set(index, choice);
    const delta = (raw.delta ?? {}) as Record<string, unknown>;
    if (typeof delta.content === 'string') choice.text += delta.content;
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (typeof reasoning === 'string') choice.reasoning += reasoning;
    if (typeof raw.finish_reason === 'string') choice.finishReason = raw.finish_reason;
    if (!Array.isArray(delta.tool_calls)) return;
    for (const call of delta.tool_calls as Record<string, unknown>[]) {
      const at = typeof call.index === 'number' ? call.index : choice.toolCalls.length;
      const fn = (call.function ?? {}) as { name?: string; arguments?: string };
      const known = choice.toolCalls[at] ?? { function: { name: '', arguments: '' } };
      if (typeof call.id === 'string') known.id = call.id;
      if (typeof call.type === 'string') known.type = call.type;
      known.function.name += fn.name ?? '';
      known.function.arguments += fn.arguments ?? '';
      choice.toolCalls[at] = known;
    }
  }

  completion(): unknown {
    if (this.choices.size === 0 && this.other.length > 0) return { events: this.other };
    return {
      id: this.id ?? null,
      model: this.model ?? null,
      choices: [...this.choices.values()]
        .sort((a, b) => a.index - b.index)
        .map((c) => ({
          index: c.index,
          text: c.text,
          ...(c.reasoning && { reasoning: c.reasoning }),
          ...(c.toolCalls.length > 0 && { tool_calls: c.toolCalls }),
          finish_reason: c.finishReason,
        })),
      usage: this.usage ?? null,
    };
  }
}
