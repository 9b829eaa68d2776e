import type { RequestLog } from '../billing/request-log.ts';
import type { Spending } from '../billing/spending.ts';

/** How a request that settled nothing ended: the status the client got, and the error it read. */
export interface UnsettledEnd {
  status: number;
  /** Absent when no error went through the error handler (the record then names none). */
  error?: { type: string; message: string } | undefined;
}

/**
 * Writes the record of a request that settled nothing (refused, failed, rate limited), once: a record its settlement
 * already carried, or one written before, is not written again. It goes through the budget stream's writer, so it
 * joins that stream's next append instead of a flush of its own. Never rejects: a failure to write it is told to
 * `failed`, since the client has its answer by then.
 */
export async function recordUnsettled(
  spending: Spending,
  log: RequestLog | undefined,
  end: UnsettledEnd,
  failed: (error: unknown) => void,
): Promise<void> {
  if (!log) return;
  if (end.error) {
    log.errorType = end.error.type;
    log.errorMessage = end.error.message;
  }
  const record = log.finish({ status: end.status, costNanos: 0n, holdId: null });
  if (!record) return;
  await spending.logRequest(record).catch(failed);
}
