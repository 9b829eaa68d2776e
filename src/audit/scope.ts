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

/**
 * The account an event belongs to: named by its stream for account and budget streams; a sub-account's stream
 * is named by the sub-account, so its events' own `accountId` decides.
 */
export function accountOf(stored: Pick<StoredEvent, 'stream' | 'data'>): string | undefined {
  const category = streamCategory(stored.stream);
  switch (category) {
    case 'account':
      return stored.stream.slice('account-'.length);
    case 'budget':
      return budgetStreamParts(stored.stream)?.accountId;
    case 'subaccount':
    case 'webhook':
    case 'webhooksecret':
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

export function scopeOf(accountId: string | undefined): Scope {
  return {
    accountId,
    includes: (stored) => accountId === undefined || accountOf(stored) === accountId,
  };
}
