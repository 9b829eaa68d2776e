import type { WebSocket } from 'ws';
import type { ModalityUpstream } from './modality.ts';

/** How the client asked the live stream to be encoded and read; the provider's query names are the adapter's. */
export interface LiveOptions {
  encoding?: string;
  sampleRate?: number;
  channels?: number;
  interimResults?: boolean;
  language?: string;
}

/** What the gateway reads from a server message; the message itself is relayed to the client unchanged. */
export type LiveMessage =
  | { type: 'Results'; endMs: number; isFinal: boolean }
  | { type: 'Metadata'; durationMs: number }
  | { type: 'other' };

/** A provider's live transcription stream: how to open it and how to read what it sends. */
export interface LiveAdapter {
  open(upstream: ModalityUpstream, options: LiveOptions, signal: AbortSignal): Promise<WebSocket>;
  parse(text: string): LiveMessage;
  /** The stream ended without its closing summary: the provider's failure as an upstream error. */
  closeFailure(code: number, reason: string): Error;
  /** The text message that asks the provider to finish and summarise; `KeepAlive` and `Finalize` pass through. */
  closeMessage: string;
}
