import type pg from 'pg';
import type { BatchState } from '../../commands/batch/decide.ts';
import type { KeyHolder } from '../accounts/live-state.ts';
import type { Spending } from '../billing/spending.ts';
import { releaseDeferred } from '../pipeline/deferred.ts';
import { lineOfRequest, lineRequestPrefix } from './output.ts';

/**
 * Releases the open holds of a batch's lines that no upstream batch records: holds made by a take that stopped
 * before it recorded them (or before its lines were served). An upstream line's hold lives 48 hours, and would
 * otherwise keep that money from the balance and the caps while the line is held again. Read from the `holds` read
 * model, which the caller has let catch up with the take's start; released as the pipeline releases any deferred
 * call's hold read back from a record (pipeline/deferred.ts).
 */
export async function releaseStrayHolds(
  pool: pg.Pool,
  spending: Spending,
  batch: { batchId: string; accountId: string; tag: string | null },
  auth: KeyHolder,
  state: BatchState,
): Promise<number> {
  const { rows } = await pool.query<{ hold_id: string; request_id: string; amount_nanos: string }>(
    `SELECT hold_id, request_id, amount_nanos::text FROM holds
     WHERE account_id = $1 AND status = 'open' AND starts_with(request_id, $2)`,
    [batch.accountId, lineRequestPrefix(batch.batchId)],
  );
  const recorded = new Set(
    [...state.groups.values()].flatMap((group) => group.prepared.lines.map((line) => line.holdId)),
  );
  let released = 0;
  for (const row of rows) {
    // Only the holds of the batch's own lines: the gateway's ids, never a client's (src/batches/output.ts).
    if (recorded.has(row.hold_id) || lineOfRequest(batch.batchId, row.request_id) === undefined) continue;
    const stray = {
      holdId: row.hold_id,
      requestId: row.request_id,
      heldNanos: row.amount_nanos,
      accountId: batch.accountId,
      subAccountId: auth.subAccountId,
      keyId: auth.keyId,
      tag: batch.tag,
    };
    await releaseDeferred(spending, stray, 'failed');
    released += 1;
  }
  return released;
}
