import { StoreUnavailableError } from '../../events/store.ts';

/** Socket errors of a connection to the database that could not be made or was cut. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/**
 * SQLSTATEs of a server that is going away or not yet back: class 08 (connection exception), 57P01 (terminated
 * by an administrator, or the postmaster died), 57P02 (another backend crashed), 57P03 (starting up, in
 * recovery), 53300 (too many connections).
 */
const SERVER_CODE = /^(08...|57P0[123]|53300)$/;

/** What `pg` and its pool say, without a code, when a connection ends under a query or cannot be had in time. */
const DRIVER_MESSAGE =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/;

/**
 * True when `error` says the database (or the EventStoreDB cluster) cannot be reached right now, as opposed to a query it refused: the request
 * can be retried once it is back. Only the error itself is examined, not its causes, so that a provider's refused
 * connection (a fetch failure caused by ECONNREFUSED) is never taken for the database's.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (error instanceof StoreUnavailableError) return true;
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (SOCKET_CODES.has(code) || SERVER_CODE.test(code))) return true;
  return typeof message === 'string' && DRIVER_MESSAGE.test(message);
}
