import type { CachedChoice } from '../cache/entry.ts';
import { storableChoices } from '../chat/cached.ts';
import { type ChatHit, hitCompletion, hitUsage } from '../chat/replayed.ts';
import type { SseEvent } from '../contracts/messages.ts';
import { messageIdFor, toMessageResponse } from './response.ts';

/** A stored chat answer as an Anthropic message, under the model whose answer it is. */
export function hitMessage(found: ChatHit) {
  const completion = hitCompletion(found);
  return toMessageResponse(completion, {
    id: messageIdFor(completion.id),
    model: found.hit.entry.model,
    usage: hitUsage(found),
  });
}

/** A native Messages answer's choice, when it is text alone that ended by itself (`end_turn`). */
export function nativeChoices(message: Record<string, unknown>): CachedChoice[] | undefined {
  const content = message.content;
  if (!Array.isArray(content)) return undefined;
  let text = '';
  for (const block of content as { type?: unknown; text?: unknown }[]) {
    // Thinking carries a signature a replay could not reproduce; tool use is never replayed.
    if (block.type !== 'text' || typeof block.text !== 'string') return undefined;
    text += block.text;
  }
  const finish = message.stop_reason === 'end_turn' ? 'stop' : message.stop_reason;
  return storableChoices([{ index: 0, message: { content: text }, finish_reason: finish }]);
}

/** Puts a native event stream's answer back together as it passes, to store it when it has ended well. */
export class NativeRecorder {
  private text = '';
  private storable = true;
  private stop: unknown;

  observe(event: SseEvent): void {
    if (!this.storable || event.data === '') return;
    let data: { type?: string; content_block?: { type?: string }; delta?: Record<string, unknown> };
    try {
      data = JSON.parse(event.data);
    } catch {
      this.storable = false;
      return;
    }
    if (data.type === 'content_block_start' && data.content_block?.type !== 'text') this.storable = false;
    if (data.type === 'content_block_delta') {
      if (data.delta?.type === 'text_delta' && typeof data.delta.text === 'string')
        this.text += data.delta.text;
      else this.storable = false;
    }
    if (data.type === 'message_delta' && data.delta?.stop_reason !== undefined)
      this.stop = data.delta.stop_reason;
  }

  choicesToStore(): CachedChoice[] | undefined {
    if (!this.storable) return undefined;
    return nativeChoices({ content: [{ type: 'text', text: this.text }], stop_reason: this.stop });
  }
}
