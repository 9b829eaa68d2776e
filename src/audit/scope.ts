import { type StoredEvent, streamCategory } from '../../events/envelope.ts';

/** `budget-{accountId}_{yyyymm}`: account ids may hold underscores, the month suffix never does. */
const BUDGET_STREAM_ID = /^(.+)_(\d{4})(\d{2})$/;

export function budgetStreamParts(stream: string): { accountId: string; month: string } | undefined {
  if (streamCategory(stream) !== 'budget') return undefined;
  const match = BUDGET_STREAM_ID.exec(stream.slice('budget-'.length));
  if (!match) return undefined;
  return { accountId: match[1] as string, month: `${match[2]}-${match[3]}` };
}

function dataAccountId(data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const value = (data as { accountId?: unknown }).accountId;
  return typeof value === 'string' ? value : undefined;
}

/** Streams whose first event names the account (`JobQueued`, `FileUploaded`, `BatchCreated`) and later ones may not. */
const OWNED_FROM_FIRST_EVENT = new Set(['job', 'file', 'batch', 'replay', 'eval']);

/**
 * The account an event belongs to: named by its stream for account and budget streams; a sub-account's stream
 * is named by the sub-account, so its events' own `accountId` decides. A job's, file's or batch's later events
 * may name no account: `scopeOf` remembers their stream's from its first event.
 */
export function accountOf(stored: Pick<StoredEvent, 'stream' | 'data'>): string | undefined {
  const category = streamCategory(stored.stream);
  switch (category) {
    case 'account':
      return stored.stream.slice('account-'.length);
    case 'cache':
      return stored.stream.slice('cache-'.length);
    case 'budget':
      return budgetStreamParts(stored.stream)?.accountId;
    case 'subaccount':
    case 'webhook':
    case 'webhooksecret':
    case 'job':
    case 'file':
    case 'batch':
    case 'replay':
    case 'eval':
      return dataAccountId(stored.data);
    default:
      return undefined;
  }
}

/** The part of the log an audit looks at: everything, or one account's streams. */
export interface Scope {
  accountId: string | undefined;
  includes(stored: Pick<StoredEvent, 'stream' | 'data'>): boolean;
}

/** Events must be offered in the log's order, so that a stream's first event comes before its others. */
export function scopeOf(accountId: string | undefined): Scope {
  const owners = new Map<string, string>();
  return {
    accountId,
    includes: (stored) => {
      if (accountId === undefined) return true;
      const named = accountOf(stored);
      if (!OWNED_FROM_FIRST_EVENT.has(streamCategory(stored.stream))) return named === accountId;
      if (named !== undefined && !owners.has(stored.stream)) owners.set(stored.stream, named);
      return owners.get(stored.stream) === accountId;
    },
  };
}
