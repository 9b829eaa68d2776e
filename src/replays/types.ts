/** A logged request as a replay needs it; `request-log.ts` reads it from the request log. */
export interface LoggedSource {
  requestId: string;
  accountId: string;
  subAccountId: string | null;
  tag: string | null;
  endpoint: string;
  /** The model that served it; null when nothing was. */
  model: string | null;
  status: number;
  costNanos: bigint;
  latencyMs: number;
  /** The stored bodies, or undefined when they were dropped (by setting or retention). */
  bodies(): Promise<{ request: unknown; response: unknown } | undefined>;
}

/** Whose requests a lookup sees (`projections/requests/queries.ts`: a main key's, or one sub-account's). */
export interface LogOwner {
  accountId: string;
  subAccountId: string | null;
}

export interface RequestLogReader {
  /** The owner's request the gateway gave this id: how the gateway finds its own requests, never by a client's id. */
  find(owner: LogOwner, requestId: string): Promise<LoggedSource | undefined>;
  /** A reader's request by the id it holds: the gateway's id, else the reader's own `X-Request-Id`. */
  lookup(owner: LogOwner, id: string): Promise<LoggedSource | undefined>;
}

/** A shadow's defaults: a tenth of the matching traffic, at most 100 comparisons, 4 running at once. */
export const SHADOW_DEFAULTS = { sampleRate: 0.1, maxRequests: 100, concurrency: 4 } as const;
