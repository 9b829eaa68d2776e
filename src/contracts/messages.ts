import type { ReportedUsage, Upstream } from './chat.ts';

/** One server-sent event as read off the wire. */
export interface SseEvent {
  event: string | undefined;
  data: string;
}

/** A request in the provider's own Messages format, passed through untranslated. */
export interface NativeCall {
  body: Record<string, unknown>;
  upstream: Upstream;
  /** The output limit the gateway reserved for. */
  maxTokens: number;
  signal: AbortSignal;
}

export interface NativeMessage {
  message: Record<string, unknown>;
  usage: ReportedUsage | undefined;
}

/** A native event stream: the first event has arrived (the provider accepted the request), the rest follow. */
export interface NativeStream {
  first: SseEvent;
  rest: AsyncIterator<SseEvent>;
}

/** Follows a native stream's usage event by event; the figures count once the stream finished. */
export interface NativeStreamUsage {
  observe(event: SseEvent): void;
  /** The provider's figures once the stream finished; before that undefined, and the gateway estimates. */
  reported(): ReportedUsage | undefined;
  /** The text produced so far, for an estimate. */
  produced: string;
}

/** A provider whose own Messages format the gateway passes through (Anthropic's `/v1/messages`). */
export interface NativeMessagesAdapter {
  complete(call: NativeCall): Promise<NativeMessage>;
  stream(call: NativeCall): Promise<NativeStream>;
  streamUsage(): NativeStreamUsage;
  /** The text of an answer, for an estimate when the provider reported no usage. */
  text(message: Record<string, unknown>): string;
}
