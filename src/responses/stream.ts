import type { ChatChunk, ReportedUsage } from '../contracts/chat.ts';
import {
  incompleteReason,
  type OutputItem,
  outputId,
  responseObject,
  responseUsage,
  textPart,
} from './response.ts';
import type { ResponsesRequest } from './schema.ts';

export type ResponseEvent = { type: string } & Record<string, unknown>;

interface ChunkToolCall {
  index?: unknown;
  id?: unknown;
  function?: { name?: unknown; arguments?: unknown };
}

interface ChunkDelta {
  content?: unknown;
  reasoning_content?: unknown;
  reasoning?: unknown;
  tool_calls?: ChunkToolCall[];
}

/** One event on the wire, as OpenAI frames it: the type is both the SSE event name and the data's `type`. */
export function sseEvent(event: ResponseEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

interface OpenItem {
  key: string;
  index: number;
  item: OutputItem;
  /** The text or arguments produced so far. */
  buffer: string;
}

/**
 * Chat-completion chunks as the Responses API's semantic events: `response.created` and `response.in_progress`,
 * then per output item (reasoning, the message, each function call) `response.output_item.added`, its content
 * part, its deltas, their `.done` and `response.output_item.done`, and at the end `response.completed` (or
 * `response.incomplete` when the output limit cut it) carrying the whole response and the usage billed. Every
 * event has a `sequence_number`. An item is done when another kind starts, as providers stream them in order.
 */
export class ResponseEvents {
  private sequence = 0;
  private open: OpenItem | undefined;
  private readonly done: OutputItem[] = [];
  /** Chat tool-call index to its item, so that a late fragment still reaches its own call. */
  private readonly tools = new Map<number, OpenItem>();
  private finish: string | null = null;

  constructor(
    private readonly body: ResponsesRequest,
    private readonly meta: { id: string; createdAt: number; model: string },
  ) {}

  private event(type: string, fields: Record<string, unknown>): ResponseEvent {
    return { type, ...fields, sequence_number: this.sequence++ };
  }

  private response(status: 'in_progress' | 'completed' | 'incomplete', usage: ReportedUsage | null) {
    return responseObject(this.body, {
      ...this.meta,
      status,
      output: [...this.done],
      usage: usage && responseUsage(usage),
      incomplete: status === 'incomplete' ? incompleteReason(this.finish) : undefined,
    });
  }

  start(): ResponseEvent[] {
    return [
      this.event('response.created', { response: this.response('in_progress', null) }),
      this.event('response.in_progress', { response: this.response('in_progress', null) }),
    ];
  }

  push(chunk: ChatChunk): ResponseEvent[] {
    const choice = chunk.choices[0] as { delta?: ChunkDelta; finish_reason?: unknown } | undefined;
    if (!choice) return [];
    if (typeof choice.finish_reason === 'string') this.finish = choice.finish_reason;
    const delta = choice.delta ?? {};
    const events: ResponseEvent[] = [];
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (typeof reasoning === 'string' && reasoning !== '') {
      const open = this.item(events, 'reasoning', (id) => ({
        id,
        type: 'reasoning',
        summary: [],
        content: [],
      }));
      open.buffer += reasoning;
      events.push(this.event('response.reasoning_text.delta', { ...this.at(open), delta: reasoning }));
    }
    if (typeof delta.content === 'string' && delta.content !== '') this.text(events, delta.content);
    for (const call of delta.tool_calls ?? []) this.toolCall(events, call);
    return events;
  }

  end(usage: ReportedUsage): ResponseEvent[] {
    const events: ResponseEvent[] = [];
    // An answer with nothing in it is still a message with an empty text, as a response read back has it.
    if (this.done.length === 0 && !this.open) this.text(events, '');
    this.close(events);
    const status = incompleteReason(this.finish) ? 'incomplete' : 'completed';
    events.push(this.event(`response.${status}`, { response: this.response(status, usage) }));
    return events;
  }

  /**
   * A failure as the `error` event, which ends the stream. It also carries the gateway's error body as `error`,
   * which the SDKs raise as an API error.
   */
  error(error: { message: string; type: string; code: number }): ResponseEvent {
    return this.event('error', { code: error.type, message: error.message, param: null, error });
  }

  private text(events: ResponseEvent[], text: string): void {
    const open = this.item(events, 'message', (id) => ({
      id,
      type: 'message',
      role: 'assistant',
      status: 'in_progress',
      content: [],
    }));
    open.buffer += text;
    if (text !== '') {
      events.push(this.event('response.output_text.delta', { ...this.at(open), delta: text, logprobs: [] }));
    }
  }

  private toolCall(events: ResponseEvent[], call: ChunkToolCall): void {
    const callIndex = typeof call.index === 'number' ? call.index : 0;
    let open = this.tools.get(callIndex);
    if (!open) {
      open = this.item(events, `tool:${callIndex}`, (id) => ({
        id,
        type: 'function_call',
        call_id: typeof call.id === 'string' && call.id !== '' ? call.id : `call_${id.slice(3)}`,
        name: typeof call.function?.name === 'string' ? call.function.name : '',
        arguments: '',
        status: 'in_progress',
      }));
      this.tools.set(callIndex, open);
    }
    const json = call.function?.arguments;
    if (typeof json === 'string' && json !== '') {
      open.buffer += json;
      events.push(
        this.event('response.function_call_arguments.delta', {
          item_id: open.item.id,
          output_index: open.index,
          delta: json,
        }),
      );
    }
  }

  private at(open: OpenItem) {
    return { item_id: open.item.id, output_index: open.index, content_index: 0 };
  }

  /** The open item of this kind, opening it (and closing the one before) when needed. */
  private item(events: ResponseEvent[], key: string, make: (id: string) => OutputItem): OpenItem {
    if (this.open?.key === key) return this.open;
    this.close(events);
    const index = this.done.length;
    const prefix = key === 'reasoning' ? 'rs' : key === 'message' ? 'msg' : 'fc';
    const item = make(outputId(this.meta.id, prefix, index));
    events.push(this.event('response.output_item.added', { output_index: index, item }));
    const open: OpenItem = { key, index, item, buffer: '' };
    if (key === 'message' || key === 'reasoning') {
      const part = key === 'message' ? textPart('') : { type: 'reasoning_text', text: '' };
      events.push(this.event('response.content_part.added', { ...this.at(open), part }));
    }
    // Reserves the index: the item's final form replaces it when it is done.
    this.done.push(item);
    this.open = open;
    return open;
  }

  private close(events: ResponseEvent[]): void {
    const open = this.open;
    if (!open) return;
    this.open = undefined;
    const { item, buffer, index } = open;
    let final: OutputItem;
    if (item.type === 'message') {
      const part = textPart(buffer);
      events.push(
        this.event('response.output_text.done', { ...this.at(open), text: buffer, logprobs: [] }),
        this.event('response.content_part.done', { ...this.at(open), part }),
      );
      const status = incompleteReason(this.finish) ? 'incomplete' : 'completed';
      final = { ...item, status, content: [part] };
    } else if (item.type === 'reasoning') {
      const part = { type: 'reasoning_text', text: buffer };
      events.push(
        this.event('response.reasoning_text.done', { ...this.at(open), text: buffer }),
        this.event('response.content_part.done', { ...this.at(open), part }),
      );
      final = { ...item, content: [part] };
    } else {
      events.push(
        this.event('response.function_call_arguments.done', {
          item_id: item.id,
          output_index: index,
          name: item.name,
          arguments: buffer,
        }),
      );
      final = { ...item, arguments: buffer, status: 'completed' };
    }
    this.done[index] = final;
    events.push(this.event('response.output_item.done', { output_index: index, item: final }));
  }
}
