import type { KeyHolder } from '../accounts/live-state.ts';
import { permitModel } from '../accounts/model-access.ts';
import type { RequestLog } from '../billing/request-log.ts';
import type { Spending } from '../billing/spending.ts';
import { type Charge, priceCharge } from '../contracts/money.ts';
import type { OwnKeys } from '../pipeline/own-key.ts';
import type { Probe } from './cache.ts';
import { priceLines } from './entry.ts';

/** A hit's charge, and what it came to in its requester's money (a sub-account's price of it). */
export type HitCharge = Charge & { billedNanos: bigint };

/** Writes what the cache did into the request's log record (before it is settled). */
export function noteProbe(log: RequestLog | undefined, probe: Probe): void {
  if (!log) return;
  log.cacheStatus = probe.status;
  if (probe.hit || probe.embeddingCostNanos !== null) {
    log.cache = {
      hit: null,
      embeddingCostNanos: probe.embeddingCostNanos === null ? null : probe.embeddingCostNanos.toString(),
    };
  }
}

/** What a hit is charged: the original's recorded lines, priced again at the cache discount. */
export function hitCharge(probe: Probe): Charge {
  const entry = probe.hit?.entry;
  if (!entry) throw new Error('pricing a cache hit without one');
  return priceCharge(priceLines(entry.charge), 'cache');
}

/**
 * Bills a hit: half of what the original request was charged (its recorded lines, pass-through and fee, at the
 * cache discount), in one append through the ledger. Caps and budgets apply as to any request: a scope without
 * room for it refuses with 402, as a reservation would.
 */
export async function chargeHit(
  spending: Spending,
  context: { auth: KeyHolder; requestId: string; tag: string | null; log?: RequestLog },
  probe: Probe,
  response: unknown,
  /** The provider keys requesters bring: a requester with its own key for the provider pays the fee alone. */
  ownKeys?: OwnKeys,
): Promise<HitCharge> {
  const hit = probe.hit;
  if (!hit) throw new Error('charging a cache hit without one');
  const { entry } = hit;
  // As a hold would be (pipeline/ledger.ts): no answer of a model the key may not use is charged for or served.
  permitModel(spending.allowedModels(context.auth), entry.model);
  // A requester whose own key would have served the call pays for a hit what it pays for a miss, the fee alone: a
  // hit never costs more than asking the provider would have.
  const ownKey = ownKeys?.ownKey(context.auth, entry.provider) !== undefined;
  const charge = ownKey ? priceCharge(priceLines(entry.charge), 'byok') : hitCharge(probe);
  const log = context.log;
  if (log) {
    noteProbe(log, probe);
    log.model = entry.model;
    log.provider = entry.provider;
    log.respond(response);
    log.cache = {
      hit: {
        type: hit.type,
        entryId: entry.id,
        sourceRequestId: entry.sourceRequestId,
        similarity: hit.similarity,
        savedNanos: charge.discountNanos.toString(),
      },
      embeddingCostNanos: probe.embeddingCostNanos === null ? null : probe.embeddingCostNanos.toString(),
    };
  }
  const billedNanos = await spending.charge(
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
