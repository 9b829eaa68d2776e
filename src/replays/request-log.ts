import type { Sql } from '../../projections/types.ts';
import type { BlobStore } from '../files/blob-store.ts';
import { findLoggedRequest, loggedBodies } from '../requests/lookup.ts';
import type { RequestLogReader } from './types.ts';

/** The request log (its read model and the body store) as replays read it. */
export function requestLogReader(sql: Sql, blobs: BlobStore): RequestLogReader {
  return {
    async find(accountId, requestId) {
      const logged = await findLoggedRequest(sql, accountId, requestId);
      if (!logged) return undefined;
      return {
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
    },
  };
}
