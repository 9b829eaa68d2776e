import type { ChatChunk, ReportedUsage } from '../contracts/chat.ts';
import { messageUsage, type StopReason, stopReason } from './response.ts';

export type MessageEvent = { type: string } & Record<string, unknown>;

interface ChunkToolCall {
  index?: unknown;
  id?: unknown;
  function?: { name?: unknown; arguments?: unknown };
}

interface ChunkDelta {
  content?: unknown;
  reasoning_content?: unknown;
  tool_calls?: ChunkToolCall[];
}

/** One event on the wire, as Anthropic frames it: the type is both the SSE event name and the data's `type`. */
export function sseEvent(event: MessageEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/**
 * Chat-completion chunks as Anthropic's event sequence: `message_start`, then per content block
 * `content_block_start`, its deltas and `content_block_stop`, then `message_delta` and `message_stop`. Text,
 * thinking and each tool call are blocks of their own, numbered in order; a block stops when another kind
 * starts. The total usage is known only at the end, so `message_start` carries the gateway's input estimate and
 * `message_delta` the whole usage (the SDKs take its input counts over the first ones).
 */
export class MessageEvents {
  private next = 0;
  private open: { key: string; index: number } | undefined;
  /** Chat tool-call index to block index. */
  private readonly tools = new Map<number, number>();
  private finish: StopReason = 'end_turn';
  /** The visible text produced, for estimating output when the provider reports no usage. */
  produced = '';

  constructor(private readonly message: { id: string; model: string; inputTokens: number }) {}

  start(): MessageEvent[] {
    const { id, model, inputTokens } = this.message;
    return [
      {
        type: 'message_start',
        message: {
          id,
          type: 'message',
          role: 'assistant',
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: {
            input_tokens: inputTokens,
            output_tokens: 0,
            cache_read_input_tokens: 0,
            cache_creation_input_tokens: 0,
          },
        },
      },
    ];
  }

  push(chunk: ChatChunk): MessageEvent[] {
    const choice = chunk.choices[0] as { delta?: ChunkDelta; finish_reason?: unknown } | undefined;
    if (!choice) return [];
    if (typeof choice.finish_reason === 'string') this.finish = stopReason(choice.finish_reason);
    const delta = choice.delta ?? {};
    const events: MessageEvent[] = [];
    if (typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '') {
      const index = this.block(events, 'thinking', { type: 'thinking', thinking: '', signature: '' });
      events.push(blockDelta(index, { type: 'thinking_delta', thinking: delta.reasoning_content }));
    }
    if (typeof delta.content === 'string' && delta.content !== '') {
      this.produced += delta.content;
      const index = this.block(events, 'text', { type: 'text', text: '' });
      events.push(blockDelta(index, { type: 'text_delta', text: delta.content }));
    }
    for (const call of delta.tool_calls ?? []) this.toolCall(events, call);
    return events;
  }

  end(usage: ReportedUsage): MessageEvent[] {
    const events: MessageEvent[] = [];
    this.close(events);
    events.push(
      {
        type: 'message_delta',
        delta: { stop_reason: this.finish, stop_sequence: null },
        usage: messageUsage(usage),
      },
      { type: 'message_stop' },
    );
    return events;
  }

  /**
   * Providers stream tool calls one after another. Should a fragment of an earlier call come late, it still
   * goes to that call's block: the SDKs accumulate deltas by block index.
   */
  private toolCall(events: MessageEvent[], call: ChunkToolCall): void {
    const callIndex = typeof call.index === 'number' ? call.index : 0;
    let index = this.tools.get(callIndex);
    if (index === undefined) {
      index = this.block(events, `tool:${callIndex}`, {
        type: 'tool_use',
        id: typeof call.id === 'string' && call.id !== '' ? call.id : `toolu_${this.message.id}_${callIndex}`,
        name: typeof call.function?.name === 'string' ? call.function.name : '',
        input: {},
      });
      this.tools.set(callIndex, index);
    }
    const json = call.function?.arguments;
    if (typeof json === 'string' && json !== '') {
      events.push(blockDelta(index, { type: 'input_json_delta', partial_json: json }));
    }
  }

  /** The index of the open block of this kind, opening it (and closing the one before) when needed. */
  private block(events: MessageEvent[], key: string, contentBlock: Record<string, unknown>): number {
    if (this.open?.key === key) return this.open.index;
    this.close(events);
    const index = this.next++;
    events.push({ type: 'content_block_start', index, content_block: contentBlock });
    this.open = { key, index };
    return index;
  }

  private close(events: MessageEvent[]): void {
    if (!this.open) return;
    events.push({ type: 'content_block_stop', index: this.open.index });
    this.open = undefined;
  }
}

const blockDelta = (index: number, delta: Record<string, unknown>): MessageEvent => ({
  type: 'content_block_delta',
  index,
  delta,
});
