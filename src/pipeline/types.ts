import type { KeyHolder } from '../accounts/live-state.ts';
import type { RequestLog } from '../billing/request-log.ts';
import type { Spending } from '../billing/spending.ts';
import type { Catalog, CatalogModel } from '../catalog/types.ts';
import type { ReportedUsage } from '../contracts/chat.ts';
import type { Charge } from '../contracts/money.ts';
import type { CredentialPools } from '../providers/credentials/pool.ts';
import type { ProviderHealth } from '../providers/health.ts';
import type { OwnKeys } from './own-key.ts';

/** What every metered call needs: the ledger, the catalog and keys, the health window and the retry bounds. */
export interface PipelineDeps {
  spending: Spending;
  catalog: Catalog;
  env: NodeJS.ProcessEnv;
  health: ProviderHealth;
  /** How long to wait for an upstream's response headers. */
  timeoutMs: number;
  /** The longest Retry-After the gateway waits out itself before passing a 429 on. */
  maxRetryWaitMs: number;
  /** The providers' credential pools; without them a call uses the environment's key as resolved. */
  credentials?: CredentialPools;
  /** The provider keys accounts bring, tried before the pools for a plan that names its owner. */
  ownKeys?: OwnKeys;
}

/** Who is asking, under which cost tag, and a signal that fires when the client goes away. */
export interface CallContext {
  auth: KeyHolder;
  requestId: string;
  tag: string | null;
  /** Aborted when the client goes away; the upstream call stops too. */
  signal: AbortSignal;
  /** The request log's record of this request; settled with the hold that served it. */
  log?: RequestLog;
  /**
   * The client's `x-gw-fit-output: true`: an output limit (its own or the model's) that its caps cannot cover is
   * lowered to what they can, instead of being refused with 402.
   */
  fitOutput?: boolean;
  /** The client's `x-routing` header, read by the automatic router. */
  routing?: string | string[];
  /** Told the routing headers once the router has chosen, so the answer (or an error after it) carries them. */
  onRouted?: (headers: Record<string, string>) => void;
  /** The caller's tokens-per-minute limits, for a client's request; work of the gateway's own has none. */
  tokenLimit?: TokenLimit;
  /** The pool credential a follow-up's earlier response was served on, kept when it can be (Responses). */
  preferCredential?: string;
  /**
   * Whether the requester's own provider keys serve the call first (docs/providers.md, Bring your own key). Unset,
   * a call at the normal price does and discounted work does not (an eval's calls, a shadow replay: the gateway's
   * own work keeps the operator's pools). A batch line the gateway runs is its requester's request to the provider
   * all the same, so the batch worker sets it (docs/batches.md, Own provider keys).
   */
  ownKeys?: boolean;
}

/**
 * Tokens per minute (input and output together), counted on a request's worst case when it is admitted (the
 * tokens its hold is sized for) and trued up by its usage when it settles. Implemented where the limits live
 * (src/http/token-limit.ts); endpoints without tokens (images, audio, jobs) never ask.
 */
export interface TokenLimit {
  /** Takes `tokens` from the caller's buckets, or refuses the request (429) when they do not hold them. */
  admit(tokens: number): Promise<AdmittedTokens>;
}

/** A request's admitted tokens, to be trued up once: never rejects (a limiter that cannot answer is logged). */
export interface AdmittedTokens {
  /** The request used `usedTokens`: what it did not use goes back, what it used beyond is taken. */
  settle(usedTokens: number): Promise<void>;
  /** Nothing was served: every admitted token goes back. */
  release(): Promise<void>;
}

/** How a served call is billed: its priced charge, whether the provider reported the usage, and in what units. */
export interface Bill {
  charge: Charge;
  usageReported: boolean;
  /** In the endpoint's natural unit (tokens, search units, seconds), for the usage report. */
  units: number;
  /** For chat: the tokens billed (the provider's, or the gateway's estimate). */
  usage?: ReportedUsage;
  /** For a routed request: what it saved against the router's baseline (chat/routed.ts). */
  savedNanos?: bigint;
  /** For a routed request: the router's decision with that saving, as the request's record keeps it. */
  routing?: unknown;
  /** The name of the pool credential that served the call (never its secret). */
  credential?: string;
}

/** What a settled call comes to: the model that served it, what it cost, how long the provider took. */
export interface Outcome {
  model: CatalogModel;
  costNanos: bigint;
  /** Upstream wall-clock time, retries included. */
  latencyMs: number;
  usageReported: boolean;
  units: number;
  usage?: ReportedUsage;
  /** The priced charge (lines, pass-through, fee): what a cached copy of the answer is billed from. */
  charge?: Charge;
  /** For a routed request: the usage priced at the baseline's rates minus the charge (negative when it cost more). */
  savedNanos?: bigint;
}
