import type { Sql } from '../../projections/types.ts';
import type { BlobStore } from '../files/blob-store.ts';
import {
  findLoggedRequest,
  findRequestForReader,
  type LoggedRequest,
  loggedBodies,
} from '../requests/lookup.ts';
import type { LoggedSource, RequestLogReader } from './types.ts';

/** The request log (its read model and the body store) as replays and evals read it. */
export function requestLogReader(sql: Sql, blobs: BlobStore): RequestLogReader {
  const source = (logged: LoggedRequest | undefined): LoggedSource | undefined =>
    logged && {
      requestId: logged.requestId,
      accountId: logged.accountId,
      subAccountId: logged.subAccountId,
      tag: logged.tag,
      endpoint: logged.endpoint,
      model: logged.model,
      status: logged.status,
      costNanos: logged.costNanos,
      latencyMs: logged.totalMs,
      bodies: () => loggedBodies({ sql, blobs }, logged),
    };
  return {
    find: async (owner, requestId) =>
      source(await findLoggedRequest(sql, owner.accountId, requestId, owner.subAccountId)),
    lookup: async (owner, id) => source(await findRequestForReader(sql, owner, id)),
  };
}
