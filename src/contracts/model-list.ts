/** One call for a provider's list of the models a key can use (its own `models` endpoint). */
export interface ModelListCall {
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  signal: AbortSignal;
}

/**
 * Asks a provider which models its key can use: the model ids as its API names them (`gpt-4o`,
 * `claude-sonnet-4-5-20250929`, `gemini-2.5-flash` without Google's `models/`), every page read. Throws when the
 * provider cannot be asked or answers something else than its list.
 */
export type ModelLister = (call: ModelListCall) => Promise<string[]>;
