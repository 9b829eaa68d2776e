import { DomainError } from '../../commands/errors.ts';
import { monthOf } from '../../events/budget.ts';
import { NANOS_PER_CENT } from '../../events/money.ts';
import type { Sql } from '../../projections/types.ts';
import { nanosToCents } from '../contracts/money.ts';

/** As GET /v1/balance answers: whole cents, rounded down (a debt rounds away from zero). */
interface Balance {
  cents: number;
  usd: number;
}

function toBalance(nanos: bigint): Balance {
  const cents = nanos >= 0n ? nanos / NANOS_PER_CENT : -((-nanos + NANOS_PER_CENT - 1n) / NANOS_PER_CENT);
  return { cents: Number(cents), usd: Number(cents) / 100 };
}

/**
 * What the operator reads about accounts, from the read models: the same answers through the admin API and
 * the CLI working on the store. Figures are as of the read models' last checkpoint (`projections status`).
 */

export interface AccountSummary {
  account_id: string;
  name: string;
  created_at: string;
  rate_limit_rpm: number;
  balance: Balance;
  active_keys: number;
  sub_accounts: number;
}

const SUMMARY = `SELECT a.account_id, a.name, a.created_at, a.rate_limit_rpm,
    coalesce(b.balance_nanos, 0)::text AS balance_nanos,
    (SELECT count(*) FROM api_keys k WHERE k.account_id = a.account_id AND k.sub_account_id IS NULL
       AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now()))::int AS active_keys,
    (SELECT count(*) FROM sub_accounts s WHERE s.account_id = a.account_id AND s.deleted_at IS NULL)::int AS sub_accounts
  FROM accounts a LEFT JOIN balances b ON b.account_id = a.account_id`;

interface SummaryRow {
  account_id: string;
  name: string;
  created_at: Date;
  rate_limit_rpm: number;
  balance_nanos: string;
  active_keys: number;
  sub_accounts: number;
  [column: string]: unknown;
}

const summary = (row: SummaryRow): AccountSummary => ({
  account_id: row.account_id,
  name: row.name,
  created_at: row.created_at.toISOString(),
  rate_limit_rpm: row.rate_limit_rpm,
  balance: toBalance(BigInt(row.balance_nanos)),
  active_keys: row.active_keys,
  sub_accounts: row.sub_accounts,
});

export async function listAccounts(sql: Sql): Promise<{ object: 'list'; data: AccountSummary[] }> {
  const { rows } = await sql.query<SummaryRow>(`${SUMMARY} ORDER BY a.created_at, a.account_id`);
  return { object: 'list', data: rows.map(summary) };
}

export interface KeyView {
  key_id: string;
  account_id: string;
  /** Null for the account's main keys. */
  sub_account_id: string | null;
  name: string;
  key_prefix: string;
  created_at: string;
  /** When it stops (or stopped) authenticating: its own expiry, or a rotation's grace end; null: never. */
  expires_at: string | null;
  /** The key that replaced it in a rotation. */
  replaced_by: string | null;
  revoked_at: string | null;
}

/**
 * An account's keys (or every key), its sub-accounts' included, newest first; with `subAccountId`, that
 * sub-account's alone. The secret itself is never stored, only its prefix.
 */
export async function listKeys(
  sql: Sql,
  accountId?: string,
  subAccountId?: string,
): Promise<{ object: 'list'; data: KeyView[] }> {
  if (accountId !== undefined) await requireAccount(sql, accountId);
  const { rows } = await sql.query<{
    key_id: string;
    account_id: string;
    sub_account_id: string | null;
    name: string;
    key_prefix: string;
    created_at: Date;
    expires_at: Date | null;
    replaced_by: string | null;
    revoked_at: Date | null;
  }>(
    `SELECT key_id, account_id, sub_account_id, name, key_prefix, created_at, expires_at, replaced_by, revoked_at
       FROM api_keys WHERE ($1::text IS NULL OR account_id = $1) AND ($2::text IS NULL OR sub_account_id = $2)
      ORDER BY created_at DESC, key_id`,
    [accountId ?? null, subAccountId ?? null],
  );
  return {
    object: 'list',
    data: rows.map((r) => ({
      key_id: r.key_id,
      account_id: r.account_id,
      sub_account_id: r.sub_account_id,
      name: r.name,
      key_prefix: r.key_prefix,
      created_at: r.created_at.toISOString(),
      expires_at: r.expires_at?.toISOString() ?? null,
      replaced_by: r.replaced_by,
      revoked_at: r.revoked_at?.toISOString() ?? null,
    })),
  };
}

export interface AccountBalance extends Balance {
  account_id: string;
  topped_up_cents: number;
  /** The operator's adjustments: credits less debits. */
  adjusted_cents: number;
  charged_cents: number;
}

/** The balance now (top-ups plus adjustments less charges), with what made it. */
export async function accountBalance(sql: Sql, accountId: string): Promise<AccountBalance> {
  await requireAccount(sql, accountId);
  const { rows } = await sql.query<{
    balance_nanos: string;
    topped_up_nanos: string;
    adjusted_nanos: string;
    charged_nanos: string;
  }>(
    `SELECT balance_nanos::text, topped_up_nanos::text, adjusted_nanos::text, charged_nanos::text
     FROM balances WHERE account_id = $1`,
    [accountId],
  );
  const row = rows[0] ?? {
    balance_nanos: '0',
    topped_up_nanos: '0',
    adjusted_nanos: '0',
    charged_nanos: '0',
  };
  return {
    account_id: accountId,
    ...toBalance(BigInt(row.balance_nanos)),
    topped_up_cents: nanosToCents(BigInt(row.topped_up_nanos)),
    adjusted_cents: nanosToCents(BigInt(row.adjusted_nanos)),
    charged_cents: nanosToCents(BigInt(row.charged_nanos)),
  };
}

export interface AccountDetail extends AccountSummary {
  balance_low_cents: number | null;
  keys: KeyView[];
  balance_detail: AccountBalance;
}

export async function showAccount(sql: Sql, accountId: string): Promise<AccountDetail> {
  const { rows } = await sql.query<SummaryRow & { balance_low: string | null }>(
    `SELECT s.*, a.balance_low_threshold_nanos::text AS balance_low FROM (${SUMMARY} WHERE a.account_id = $1) s
       JOIN accounts a ON a.account_id = s.account_id`,
    [accountId],
  );
  const row = rows[0];
  if (!row) throw new DomainError('not_found', `No account ${accountId}`, 'account');
  const [keys, balance] = await Promise.all([listKeys(sql, accountId), accountBalance(sql, accountId)]);
  return {
    ...summary(row),
    balance_low_cents: row.balance_low === null ? null : nanosToCents(BigInt(row.balance_low)),
    keys: keys.data,
    balance_detail: balance,
  };
}

export interface UsageFigures {
  requests: number;
  cost_cents: number;
  units: number;
}

export interface AccountUsage {
  account_id: string;
  month: string;
  total: UsageFigures;
  /** '' is the account's own keys. */
  by_sub_account: (UsageFigures & { sub_account_id: string })[];
  /** '' is untagged requests. */
  by_tag: (UsageFigures & { tag: string })[];
}

/** An account's month of usage (the current UTC month by default): in total, per sub-account and per tag. */
export async function accountUsage(
  sql: Sql,
  accountId: string,
  month = monthOf(new Date()),
): Promise<AccountUsage> {
  await requireAccount(sql, accountId);
  const grouped = async (column: 'sub_account_id' | 'tag') => {
    const { rows } = await sql.query<{ key: string; requests: string; cost_nanos: string; units: string }>(
      `SELECT ${column} AS key, sum(requests)::text AS requests, sum(cost_nanos)::text AS cost_nanos,
              sum(units)::text AS units
         FROM usage WHERE account_id = $1 AND month = $2 GROUP BY ${column} ORDER BY ${column}`,
      [accountId, month],
    );
    return rows.map((r) => ({ key: r.key, ...figures(r) }));
  };
  const [bySub, byTag] = await Promise.all([grouped('sub_account_id'), grouped('tag')]);
  const sum = bySub.reduce(
    (acc, r) => ({
      requests: acc.requests + r.requests,
      cost: acc.cost + r.costNanos,
      units: acc.units + r.units,
    }),
    { requests: 0, cost: 0n, units: 0 },
  );
  const plain = ({ costNanos: _, ...rest }: UsageFigures & { costNanos: bigint }) => rest;
  return {
    account_id: accountId,
    month,
    total: { requests: sum.requests, cost_cents: nanosToCents(sum.cost), units: sum.units },
    by_sub_account: bySub.map(({ key, ...r }) => ({ sub_account_id: key, ...plain(r) })),
    by_tag: byTag.map(({ key, ...r }) => ({ tag: key, ...plain(r) })),
  };
}

function figures(row: { requests: string; cost_nanos: string; units: string }) {
  const costNanos = BigInt(row.cost_nanos);
  return {
    requests: Number(row.requests),
    cost_cents: nanosToCents(costNanos),
    units: Number(row.units),
    costNanos,
  };
}

async function requireAccount(sql: Sql, accountId: string): Promise<void> {
  const { rows } = await sql.query('SELECT 1 FROM accounts WHERE account_id = $1', [accountId]);
  if (rows.length === 0) throw new DomainError('not_found', `No account ${accountId}`, 'account');
}
