/** An in-process provider simulator: tests point the gateway at `url` and assert on `requests`. */
export interface Upstream {
  url: string;
  requests: RecordedRequest[];
  /** Queues a behaviour for one future request; requests take them in order, 'ok' once the queue is empty. */
  script(next: Script): void;
  /**
   * How every request carrying this key answers from now on, before the script queue (none given: as before);
   * for key pools, whose credentials the simulator tells apart.
   */
  scriptKey?(key: string, script: Script | undefined): void;
  /** How one upstream model answers from now on, by the model name the provider sees (`gpt-4o`); chat simulators only. */
  behave?(model: string, behaviour: ModelBehaviour): void;
  /** TCP connections accepted so far (the JSON and SSE simulators): whether the gateway kept its connection alive between calls. */
  connections?(): number;
  /** The provider's own model list (OpenAI's, Anthropic's and Gemini's simulators). */
  models?: ModelListControl;
  close(): Promise<void>;
}

/**
 * What a simulator's model list answers. List calls take no script and are not in `requests`: the gateway asks at
 * start and on a schedule.
 */
export interface ModelListControl {
  /** The ids listed from now on; none given: every id the catalog sends to the simulator's API family (the default). */
  offer(ids?: readonly string[]): void;
  /** Answer list calls with this status from now on (the provider's own error body); none given: answer again. */
  fail(status?: number): void;
  /** The largest page answered whatever the request asks, so that paging shows; none given: the provider's own. */
  pageSize(size?: number): void;
  /** List calls received so far (pages count one each). */
  calls(): number;
}

/** One model's own ways: a delay before it answers, and (OpenAI's format) its own reply to the last user text. */
export interface ModelBehaviour {
  delayMs?: number;
  reply?: (lastUserText: string) => string;
}

export interface RecordedRequest {
  method: string;
  /** The path without the query string (see `query` for that). */
  path: string;
  query: Record<string, string>;
  /** Lower-cased names; repeated headers joined with ', '. */
  headers: Record<string, string>;
  /** Parsed JSON; the raw text when it is not JSON; undefined when empty. */
  body: unknown;
}

export type Script =
  // chunkDelayMs spaces out streamed chunks, for tests that watch chunks arrive one by one.
  // endDelayMs holds the end of a streamed body back after its last event, as when a provider's terminating chunk
  // comes in a later packet than its `[DONE]`.
  | { kind: 'ok'; chunkDelayMs?: number; endDelayMs?: number }
  | { kind: 'error'; status: number; body?: unknown; headers?: Record<string, string> }
  | { kind: 'rate_limited'; retryAfterSeconds: number }
  | { kind: 'slow_first_byte'; ms: number }
  | { kind: 'hang' }
  | { kind: 'disconnect_mid_stream'; afterChunks: number };
