/**
 * The contract between the modality endpoints and the provider adapters that serve them. Adapters speak their
 * provider's wire format and answer in these neutral shapes; the services turn them into the API's responses and
 * bill them. A figure the provider did not report is `undefined` here (the service then estimates it and marks the
 * charge as estimated), never a zero.
 */

export interface ModalityUpstream {
  /** The provider's model id. */
  model: string;
  baseUrl: string;
  apiKey: string;
  /** How long to wait for the response headers. */
  timeoutMs: number;
}

export interface ModalityCall {
  upstream: ModalityUpstream;
  signal: AbortSignal;
}

export interface EmbeddingsCall extends ModalityCall {
  inputs: string[];
  dimensions?: number;
}

export interface Embeddings {
  /** One vector per input, in input order. */
  vectors: number[][];
  /** Input tokens as the provider billed them. */
  inputTokens: number | undefined;
}

export interface EmbeddingsAdapter {
  embed(call: EmbeddingsCall): Promise<Embeddings>;
}

export interface ModerationsCall extends ModalityCall {
  inputs: string[];
}

/** One input's verdict in OpenAI's shape; categories a provider does not rate are absent, not false. */
export interface ModerationVerdict {
  flagged: boolean;
  categories: Record<string, boolean>;
  category_scores: Record<string, number>;
  category_applied_input_types?: Record<string, string[]>;
}

export interface Moderations {
  /** The provider's id for the call, when it gives one. */
  id: string | undefined;
  results: ModerationVerdict[];
  inputTokens: number | undefined;
}

export interface ModerationsAdapter {
  moderate(call: ModerationsCall): Promise<Moderations>;
}

export interface RerankCall extends ModalityCall {
  query: string;
  documents: string[];
  topN: number;
}

/** What a rerank call is billed in: Cohere counts search units, the others count tokens. */
export type RerankUnit = 'search_units' | 'tokens';

export interface Reranking {
  /** Most relevant first; `index` is the document's position in the request. */
  ranked: { index: number; relevanceScore: number }[];
  /** Units of the adapter's `unit` as the provider billed them. */
  billedUnits: number | undefined;
}

export interface RerankAdapter {
  unit: RerankUnit;
  rerank(call: RerankCall): Promise<Reranking>;
}
