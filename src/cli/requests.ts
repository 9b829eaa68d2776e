import { findRequestAnywhere, monthOfRequests } from '../../projections/requests/queries.ts';
import type { Sql } from '../../projections/types.ts';
import type { BlobStore } from '../files/blob-store.ts';
import { loggedBodies, loggedRequest } from '../requests/lookup.ts';
import { requestView } from '../requests/view.ts';

/**
 * `requests show ID [--account ID]`: the record (by the gateway's id, else a client's `X-Request-Id`) and its bodies
 * when kept; undefined when unknown.
 */
export async function showRequest(
  sql: Sql,
  blobs: BlobStore,
  requestId: string,
  accountId?: string,
): Promise<unknown> {
  const row = await findRequestAnywhere(sql, requestId, accountId);
  if (!row) return undefined;
  const logged = loggedRequest(row);
  const bodies = await loggedBodies({ sql, blobs }, logged);
  return {
    ...requestView(logged),
    account_id: logged.accountId,
    request_body: bodies?.request ?? null,
    response_body: bodies?.response ?? null,
  };
}

/** `requests export --month YYYY-MM [--account ID]`: one JSON line per request, oldest first (no bodies). */
export async function exportRequests(sql: Sql, month: string, accountId?: string): Promise<string> {
  const rows = await monthOfRequests(sql, month, accountId);
  return rows
    .map((row) => {
      const logged = loggedRequest(row);
      return `${JSON.stringify({ ...requestView(logged), account_id: logged.accountId })}\n`;
    })
    .join('');
}
