import { permitModel } from '../accounts/model-access.ts';
import type { RequestLog } from '../billing/request-log.ts';
import type { Catalog } from '../catalog/types.ts';
import type { ReportedUsage } from '../contracts/chat.ts';
import { type Charge, type Discount, type PriceLine, priceCharge } from '../contracts/money.ts';
import { cacheHeaders, outcomeHeaders } from './headers.ts';
import { noteRouting } from './record.ts';
import type { CallContext, Outcome, PipelineDeps } from './types.ts';

/**
 * An endpoint's use of the response cache, as data and small functions (chat, messages, embeddings each give
 * one): how to look the request up, how a stored answer answers it, the served call, and how to keep what it
 * served. The pipeline runs them in one order for every endpoint (`cachedCall`).
 */
export interface CachedEndpoint<L extends CacheLookup, A, M, K> {
  /**
   * Undefined when the cache is off or takes no part; `BYPASSED` when the request neither looks up nor stores;
   * throws a refusal (a model the key may not use).
   */
  lookup(): Promise<L | Bypassed | undefined>;
  /** The stored answer in the endpoint's shape: a completion, a message, vectors, or a replayed stream's items. */
  answer(found: Found<L>): A;
  /** What the request's record keeps of a hit, when not the answer itself (a replayed stream keeps the whole). */
  recorded?(found: Found<L>): unknown;
  /**
   * The routing decision the lookup came to, as the request's record keeps it; given a hit, with the hit's saving
   * against the router's baseline (recorded before the hit is charged, since the charge carries the record).
   * Undefined when the request was not routed.
   */
  routing?(found?: Found<L>): { record: unknown; savedNanos?: bigint } | undefined;
  /** The request asks for a stream: a hit's record says so (its answer is replayed as one). */
  stream?: boolean;
  /**
   * The served call, when nothing was found. `keeps`: whether its answer may be stored; when not, a stream need not
   * be recorded as it passes.
   */
  serve(keeps: boolean): Promise<M>;
  /**
   * A served answer's outcome and what of it the cache may keep (undefined: nothing). Absent for a stream: its
   * answer is known only at its end, so the relay keeps it through the step's `keep`.
   */
  kept?(served: M): { outcome: Outcome; answer: K | undefined };
  /** Stores a served answer. */
  store(lookup: L, outcome: Outcome, answer: K): Promise<void>;
}

export type Cached<A, M, K> =
  | { hit: true; answer: A; outcome: Outcome }
  | {
      hit: false;
      served: M;
      /** Keeps a streamed answer once it has ended well, before its end is written. */
      keep(outcome: Outcome, answer: K | undefined): Promise<void>;
    };

/**
 * The cache step of a served call: look up → on a hit, charge it (the original's lines at the cache discount,
 * one append) and answer with the stored copy → else serve the call and keep its answer. Headers go out as soon as they are
 * known, so that a refusal after the lookup still says what the cache did.
 */
export async function cachedCall<L extends CacheLookup, A, M, K>(
  deps: Pick<PipelineDeps, 'spending' | 'catalog' | 'ownKeys'>,
  context: CallContext,
  endpoint: CachedEndpoint<L, A, M, K>,
  setHeaders: (headers: Record<string, string>) => void,
): Promise<Cached<A, M, K>> {
  // The routing is recorded however the lookup ends: a refusal after the router chose still says how it was routed.
  const lookup = await endpoint
    .lookup()
    .finally(() => noteRouting(context.log, endpoint.routing?.()?.record));
  noteLookup(context.log, lookup);
  setHeaders(cacheHeaders(lookup));
  if (isFound(lookup)) {
    const answer = endpoint.answer(lookup);
    const routed = endpoint.routing?.(lookup);
    const savedNanos = routed?.savedNanos;
    noteRouting(context.log, routed?.record);
    if (context.log && endpoint.stream) context.log.stream = true;
    const recorded = endpoint.recorded ? endpoint.recorded(lookup) : answer;
    const charge = await chargeHit(deps, context, lookup, recorded);
    const outcome = {
      ...hitOutcome(deps.catalog, lookup, charge),
      ...(savedNanos !== undefined && { savedNanos }),
    };
    setHeaders(outcomeHeaders(outcome));
    return { hit: true, answer, outcome };
  }
  const stored = lookup === undefined || isBypassed(lookup) ? undefined : lookup;
  // Awaited: the next identical request finds the answer.
  const keep = async (outcome: Outcome, answer: K | undefined) => {
    if (stored && answer !== undefined) await endpoint.store(stored, outcome, answer);
  };
  const served = await endpoint.serve(stored !== undefined);
  const kept = endpoint.kept?.(served);
  if (kept) {
    setHeaders(outcomeHeaders(kept.outcome));
    await keep(kept.outcome, kept.answer);
  }
  return { hit: false, served, keep };
}

/** The original request's charge as it was recorded: a hit is billed from these lines at the cache discount. */
export interface StoredCharge {
  lines: { item: string; quantity: number; unitPriceNanosPerMillion: string }[];
  discount: Discount;
  chargedNanos: string;
  usageReported: boolean;
  units: number;
}

/**
 * What the pipeline reads of a response-cache lookup. The cache stands above the pipeline (its embeddings are
 * metered calls), so the pipeline names the shape it needs and the cache's `Probe` is one.
 */
export interface CacheLookup {
  /** X-Cache-Status. */
  status: string;
  /** RFC 9211's Cache-Status. */
  cacheStatus: string;
  /** What embedding the prompt for a semantic lookup cost, when it was embedded. */
  embeddingCostNanos: bigint | null;
  hit?: {
    type: 'exact' | 'semantic';
    similarity: number | null;
    entry: {
      id: string;
      /** The model and upstream whose answer is stored. */
      model: string;
      provider: string;
      sourceRequestId: string;
      charge: StoredCharge;
      /** Which endpoint's answer; a chat answer's usage is the figures the original was billed on. */
      answer: { kind: string; usage?: ReportedUsage };
    };
  };
}

export type Found<L extends CacheLookup> = L & { hit: NonNullable<L['hit']> };

/** A request the cache takes no part in beyond saying so: nothing is keyed, read or stored for it. */
export interface Bypassed extends CacheLookup {
  hit?: undefined;
}

/**
 * The lookup of a request that neither looks up nor stores (`cache: skip`, a sampled request in `auto`): decided
 * from the request alone, so that the cache's key, store and recording cost it nothing; its status is still told.
 */
export const BYPASSED: Bypassed = Object.freeze({
  status: 'skip',
  cacheStatus: 'gateway; fwd=bypass',
  embeddingCostNanos: null,
});

const isBypassed = (lookup: CacheLookup): lookup is Bypassed => lookup === BYPASSED;

/**
 * An endpoint the response cache does not serve (`/v1/responses`, `/v1/completions`): its headers and its record say
 * so as a request the cache skips does.
 */
export function notCached(
  context: Pick<CallContext, 'log'>,
  setHeaders: (headers: Record<string, string>) => void,
): void {
  noteLookup(context.log, BYPASSED);
  setHeaders(cacheHeaders(BYPASSED));
}

const isFound = <L extends CacheLookup>(lookup: L | Bypassed | undefined): lookup is Found<L> =>
  lookup?.hit !== undefined;

const priceLines = (charge: StoredCharge): PriceLine[] =>
  charge.lines.map((l) => ({ ...l, unitPriceNanosPerMillion: BigInt(l.unitPriceNanosPerMillion) }));

/**
 * What a hit on lines of `provider` costs its requester: the lines at the cache discount, or, for a requester whose
 * own key would have served the call, the fee alone, what a miss costs it (a hit never costs more than asking the
 * provider would have).
 */
export function hitPrice(
  ownKeys: PipelineDeps['ownKeys'],
  auth: CallContext['auth'],
  provider: string,
  lines: PriceLine[],
): Charge {
  const ownKey = ownKeys?.ownKey(auth, provider) !== undefined;
  return priceCharge(lines, ownKey ? 'byok' : 'cache');
}

/** What a hit is charged: the original's recorded lines, priced again for its requester (`hitPrice`). */
export const hitCharge = (
  ownKeys: PipelineDeps['ownKeys'],
  auth: CallContext['auth'],
  found: Found<CacheLookup>,
): Charge => hitPrice(ownKeys, auth, found.hit.entry.provider, priceLines(found.hit.entry.charge));

/** A hit's charge, and what it came to in its requester's money (a sub-account's price of it). */
type HitCharge = Charge & { billedNanos: bigint };

/** Writes what the cache did into the request's record (before it is settled or logged as refused). */
function noteLookup(log: RequestLog | undefined, lookup: CacheLookup | undefined): void {
  if (!log || !lookup) return;
  log.cacheStatus = lookup.status;
  if (lookup.hit || lookup.embeddingCostNanos !== null)
    log.cache = { hit: null, embeddingCostNanos: costText(lookup) };
}

const costText = (lookup: CacheLookup) =>
  lookup.embeddingCostNanos === null ? null : lookup.embeddingCostNanos.toString();

/**
 * Bills a hit: half of what the original request was charged (its recorded lines, pass-through and fee, at the
 * cache discount), in one append that holds and settles in one decision. Caps and budgets apply as to any
 * request: a scope without room for it refuses with 402, as a reservation would.
 */
async function chargeHit(
  deps: Pick<PipelineDeps, 'spending' | 'ownKeys'>,
  context: Pick<CallContext, 'auth' | 'requestId' | 'tag' | 'log'>,
  found: Found<CacheLookup>,
  /** The answer as the request's record keeps it. */
  response: unknown,
): Promise<HitCharge> {
  const { entry } = found.hit;
  // As a hold would be (ledger.ts), and before the record names the answer: no answer of a model the key may not
  // use is charged for or served, and a refused request's record does not carry one.
  permitModel(deps.spending.allowedModels(context.auth), entry.model);
  const charge = hitCharge(deps.ownKeys, context.auth, found);
  const log = context.log;
  if (log) {
    log.cacheStatus = found.status;
    log.model = entry.model;
    log.provider = entry.provider;
    log.respond(response);
    log.cache = {
      hit: {
        type: found.hit.type,
        entryId: entry.id,
        sourceRequestId: entry.sourceRequestId,
        similarity: found.hit.similarity,
        savedNanos: charge.discountNanos.toString(),
      },
      embeddingCostNanos: costText(found),
    };
  }
  const billedNanos = await deps.spending.charge(
    context.auth,
    { requestId: context.requestId, tag: context.tag, ...(log && { log }) },
    {
      model: entry.model,
      provider: entry.provider,
      charge,
      usageReported: entry.charge.usageReported,
      units: entry.charge.units,
    },
  );
  return { ...charge, billedNanos };
}

/** A hit as the served headers and stream ends take an outcome: the stored answer's model, the hit's charge. */
function hitOutcome(catalog: Catalog, found: Found<CacheLookup>, charge: HitCharge): Outcome {
  const { entry } = found.hit;
  const model = catalog.get(entry.model);
  // The lookup drops an entry whose model the catalog no longer has.
  if (!model) throw new Error(`a cache hit of a model the catalog lacks: ${entry.model}`);
  return {
    model,
    // What the requester was charged: a sub-account's price of the hit.
    costNanos: charge.billedNanos,
    // Nothing upstream was waited for.
    latencyMs: 0,
    usageReported: entry.charge.usageReported,
    units: entry.charge.units,
    charge,
    ...(entry.answer.usage && { usage: entry.answer.usage }),
  };
}
