import type { KeyHolder } from '../accounts/live-keys.ts';
import type { RequestLog } from '../billing/request-log.ts';
import type { Hold } from '../billing/spending.ts';
import type { CatalogModel } from '../catalog/types.ts';
import type { Affinity } from './credentials.ts';
import { release, settle } from './ledger.ts';
import { ownKeyBill, ownKeyRoute, withOwnKey } from './own-key.ts';
import { noteRouting } from './record.ts';
import { clientError, retryable, withRetries } from './retries.ts';
import type { AdmittedTokens, Bill, Outcome, PipelineDeps } from './types.ts';

/** What a reservation holds: the money, and the request's tokens when a tokens-per-minute limit admitted them. */
export interface Reserved {
  hold: Hold;
  tokens?: AdmittedTokens;
}

/** A resolved model and whatever its adapter needs (the adapter, the upstream). */
export interface Candidate {
  model: CatalogModel;
}

/**
 * One metered call, as a feature describes it: how to resolve the candidates in order (the model, then its
 * fallbacks; a refusal such as an unknown model is thrown here), how to hold the worst case on one, and the
 * upstream call itself.
 */
export interface Plan<C extends Candidate, R extends Reserved, T> {
  /** May wait: the automatic router counts the prompt before it chooses. */
  resolve(): C[] | Promise<C[]>;
  /**
   * `ownKeyOnly`: the call goes only to the requester's own provider key (no fallback to the operator's pool), so
   * the provider bills the requester and the hold is the fee alone (the `byok` discount).
   */
  reserve(candidate: C, ownKeyOnly?: boolean): Promise<R>;
  call(candidate: C, reserved: R): Promise<T>;
  /** Whose request it is: their own provider keys are tried first (docs/providers.md, Bring your own key). */
  owner?: Pick<KeyHolder, 'accountId' | 'subAccountId'>;
  /** The credential of the pool the conversation should keep when it can (pipeline/credentials.ts). */
  affinity?: Affinity;
  /**
   * The routing decision `resolve` came to, as the request's record keeps it (undefined when the request was not
   * routed): recorded before the first hold, so that a routed request refused or failed still says how it was routed.
   */
  routing?(): unknown;
  /** The request's record, when it has one, which the pipeline writes as the call goes. */
  log?: RequestLog;
}

/** A call the provider served, its hold still open: what settles it comes next. */
export interface Served<C extends Candidate, R extends Reserved, T> {
  candidate: C;
  reserved: R;
  result: T;
  latencyMs: number;
  /** The pool credential that served, by name. */
  credential?: string;
  /** Served on the requester's own provider key: charged the fee alone. */
  ownKey?: true;
}

/**
 * resolve → reserve → call with retries and health recording → on failure release, and try the next candidate
 * when the failure is retryable. The request is held, and later charged, once: for the attempt that served it.
 */
export async function serve<C extends Candidate, R extends Reserved, T>(
  deps: PipelineDeps,
  plan: Plan<C, R, T>,
): Promise<Served<C, R, T>> {
  let failure: unknown;
  let candidates: C[];
  try {
    candidates = await plan.resolve();
  } finally {
    // Recorded however resolving ends: a refusal after the router chose still says how it was routed.
    noteRouting(plan.log, plan.routing?.());
  }
  for (const [index, candidate] of candidates.entries()) {
    const own = ownKeyRoute(deps.ownKeys, plan.owner, candidate);
    const reserved = await plan.reserve(candidate, own !== undefined && !own.fallback);
    const started = performance.now();
    try {
      reserved.hold.log?.tried(candidate.model.id, candidate.model.provider, index);
      const { result, credential, ownKey } = await withRetries(deps, candidate.model.provider, () =>
        withOwnKey(deps.credentials, own, candidate, (keyed) => plan.call(keyed, reserved), plan.affinity),
      );
      const latencyMs = Math.round(performance.now() - started);
      return {
        candidate,
        reserved,
        result,
        latencyMs,
        ...(credential && { credential }),
        ...(ownKey && { ownKey }),
      };
    } catch (error) {
      await Promise.all([release(deps.spending, reserved.hold, 'failed'), reserved.tokens?.release()]);
      failure = clientError(error, candidate.model.id);
      if (index === candidates.length - 1 || !retryable(error)) throw failure;
    }
  }
  throw failure;
}

/** → settle: the served call's hold is settled at its bill, and the outcome is what the client is told. */
export async function settleServed<C extends Candidate, R extends Reserved, T>(
  deps: Pick<PipelineDeps, 'spending' | 'credentials'>,
  served: Served<C, R, T>,
  billed: Bill,
): Promise<Outcome> {
  const bill = served.ownKey ? ownKeyBill(billed) : billed;
  const log = served.reserved.hold.log;
  if (log) {
    log.respond(served.result);
    if (bill.usage) log.usage = { ...bill.usage };
    noteRouting(log, bill.routing);
  }
  // The tokens are trued up beside the charge: `units` is what a token-priced call used (chat: input and output;
  // embeddings: input), and only such calls admit tokens.
  const [costNanos] = await Promise.all([
    settle(deps.spending, served.reserved.hold, served.candidate.model, {
      ...bill,
      ...(served.credential && { credential: served.credential }),
    }),
    served.reserved.tokens?.settle(bill.units),
  ]);
  // What the operator's credential used counts towards its limits (an own key's is the requester's business).
  if (served.credential && !served.ownKey) {
    const { provider } = served.candidate.model;
    deps.credentials?.used(provider, served.credential, bill.units, bill.charge.passThroughNanos);
  }
  return {
    model: served.candidate.model,
    costNanos,
    latencyMs: served.latencyMs,
    usageReported: bill.usageReported,
    units: bill.units,
    charge: bill.charge,
    ...(bill.usage && { usage: bill.usage }),
    ...(bill.savedNanos !== undefined && { savedNanos: bill.savedNanos }),
  };
}

/** The whole metered call, top to bottom: serve (resolve, reserve, call, release on failure), then settle. */
export async function meteredCall<C extends Candidate, R extends Reserved, T>(
  deps: PipelineDeps,
  plan: Plan<C, R, T> & { bill(result: T, reserved: R): Bill | Promise<Bill> },
): Promise<{ result: T; outcome: Outcome }> {
  const served = await serve(deps, plan);
  const outcome = await settleServed(deps, served, await plan.bill(served.result, served.reserved));
  return { result: served.result, outcome };
}
