import type { ChatBody, ChatCompletion, ReportedUsage, Upstream } from './chat.ts';

/** One request of an upstream batch: the gateway's key for it and the chat body as the gateway would send it. */
export interface UpstreamBatchLine {
  key: string;
  body: ChatBody;
}

/** Where the provider's batch stands: still running, or over (and how it ended). */
export type UpstreamBatchState =
  | { state: 'running' }
  | { state: 'ended' | 'expired' | 'cancelled' }
  | { state: 'failed'; message: string };

/** One request's outcome: its answer and the provider's usage, or its error. Requests not listed were not served. */
export type UpstreamBatchResult =
  | { key: string; completion: ChatCompletion; usage: ReportedUsage | undefined }
  | { key: string; error: { status: number; message: string } };

/** A provider's own batch API (OpenAI Batch, Anthropic Message Batches, Gemini batch mode), for chat lines. */
export interface BatchApi {
  /** Submits the lines as one upstream batch; resolves with the provider's id for it. `tag` names it upstream. */
  submit(upstream: Upstream, lines: UpstreamBatchLine[], tag: string, signal: AbortSignal): Promise<string>;
  /**
   * The upstream batch the gateway submitted under `tag`, when the provider can be asked (OpenAI's metadata,
   * Gemini's display name): a submission whose id was never recorded is found rather than sent again.
   */
  find?(upstream: Upstream, tag: string, signal: AbortSignal): Promise<string | undefined>;
  poll(upstream: Upstream, id: string, signal: AbortSignal): Promise<UpstreamBatchState>;
  /** The results of an upstream batch that is over. */
  results(upstream: Upstream, id: string, signal: AbortSignal): Promise<UpstreamBatchResult[]>;
  cancel(upstream: Upstream, id: string, signal: AbortSignal): Promise<void>;
}
