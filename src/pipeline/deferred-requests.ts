import type { RequestBodies } from '../billing/request-bodies.ts';
import { RequestLog } from '../billing/request-log.ts';
import type { Hold, Spending } from '../billing/spending.ts';
import type { CatalogModel } from '../catalog/types.ts';
import { heldFor, holderOf, onCredential, type RecordedHold } from './deferred.ts';
import { release, settle } from './ledger.ts';
import type { Bill } from './types.ts';
import { recordUnsettled } from './unsettled.ts';

/**
 * Deferred calls that are requests of their own: the lines of a provider's batch, held when they were submitted and
 * answered when the provider's batch ends, perhaps days and restarts later. Each ends as a served request does: settled
 * from the provider's result with its request record carried by the settlement, or released with the failure's
 * record written alone. The feature supplies data and pure functions: the call's recorded hold and model, the bill
 * of the provider's result, the record's fields.
 */

export interface DeferredRequestDeps {
  spending: Spending;
  /** Where request records keep their bodies; without it the request log is off and no record is written. */
  bodies: RequestBodies | undefined;
  /** Told a record that could not be written (the money has moved by then). */
  log(line: string): void;
}

/** One deferred request, as its hold and its work recorded it. */
export interface DeferredRequest {
  /** The hold; its `model` names the price book its scopes are charged by. */
  hold: RecordedHold;
  /** What it ran on, priced as it is billed (a batch line: at the batch rates). */
  model: CatalogModel;
  /** The credential the provider's work went out on; the requester's own key is charged the fee alone. */
  credential?: string | undefined;
  /** The record's fields as the client asked: the endpoint and its body, the batch line it is. */
  endpoint: string;
  body: unknown;
  batchLine?: { batchId: string; line: number };
}

/** A request the provider served: its bill from the provider's result (against the hold it ends), and its answer. */
export interface ServedResult {
  bill(hold: Hold): Promise<Bill>;
  response: unknown;
}

/**
 * Settles a served deferred request from the provider's result, its record carried by the settlement; resolves with
 * the charge in the requester's money.
 */
export async function settleDeferredRequest(
  deps: DeferredRequestDeps,
  request: DeferredRequest,
  served: ServedResult,
): Promise<bigint> {
  const hold = heldFor(deps.spending, request.hold);
  const bill = onCredential(await served.bill(hold), request.credential);
  const log = recordOf(deps, request);
  if (log) {
    log.respond(served.response);
    if (bill.usage) log.usage = { ...bill.usage };
  }
  return settle(deps.spending, { ...hold, ...(log && { log }) }, request.model, bill);
}

/**
 * Releases a deferred request the provider did not serve (`cancelled`: the batch was). A request the provider
 * answered with an error gets its record, the failure as the client reads it, written alone; one it never reached
 * has none.
 */
export async function releaseDeferredRequest(
  deps: DeferredRequestDeps,
  request: DeferredRequest,
  reason: 'failed' | 'cancelled',
  failure?: { status: number; error: { type: string; message: string } },
): Promise<void> {
  await release(deps.spending, heldFor(deps.spending, request.hold), reason);
  if (!failure) return;
  const log = recordOf(deps, request);
  await recordUnsettled(deps.spending, log, failure, (error) =>
    deps.log(`logging ${request.hold.requestId} failed: ${String(error)}`),
  );
}

/** The request's record, on the model it ran on (its first and only attempt). */
function recordOf(deps: DeferredRequestDeps, request: DeferredRequest): RequestLog | undefined {
  if (!deps.bodies) return undefined;
  const log = new RequestLog(deps.bodies, {
    requestId: request.hold.requestId,
    ...(request.batchLine && { batchLine: request.batchLine }),
    auth: holderOf(request.hold),
    endpoint: request.endpoint,
    body: request.body,
  });
  log.tag = request.hold.tag;
  log.tried(request.model.id, request.model.provider, 0);
  return log;
}
