import { randomBytes } from 'node:crypto';
import { SubAccountCommands } from '../../commands/subaccount/handler.ts';
import { NANOS_PER_CENT } from '../../events/money.ts';
import type { EventStore } from '../../events/store.ts';
import type { Sql } from '../../projections/types.ts';
import { subAccountSpending } from '../../projections/usage/index.ts';
import { RequestRefused } from '../contracts/errors.ts';
import { nanosToCents } from '../contracts/money.ts';
import { generateKey } from './keys.ts';
import type { KeyHolder, LiveAccount, LiveAccounts, LiveSubAccount } from './live-state.ts';
import { cappedTpm, type ResellerInput, resellerSettings, resellerView } from './reseller-settings.ts';
import { periodSpending, periodView } from './spend-period.ts';
import { type Statement, statementOf } from './statement.ts';

export interface SubAccountInput extends ResellerInput {
  name?: string;
  external_ref?: string | null;
  spend_cap_cents?: number;
  rate_limit_rpm?: number;
  default_tag?: string | null;
}

export interface SubAccountRecord {
  id: string;
  object: 'sub_account';
  name: string;
  external_ref: string | null;
  spend_cap_cents: number;
  /** The effective limit: what was asked for, capped at the account's own. */
  rate_limit_rpm: number;
  default_tag: string | null;
  created_at: number;
  spent_cents: number;
  key?: string;
  markup_percent: number;
  price_overrides: { model: string; markup_percent: number }[];
  spend_cap_reset: 'daily' | 'weekly' | 'monthly' | null;
  rate_limit_tpm: number | null;
  allowed_models: string[] | null;
  /** In the sub-account's price, over its cap's current period (for life when its cap does not renew). */
  spent_this_period_cents: number;
  /** Unix seconds when the cap renews; null when it does not. */
  period_resets_at: number | null;
}

/** Sub-accounts: scoped keys with their own cap, rate limit and default tag, read from the live state. */
export class SubAccounts {
  private readonly commands: SubAccountCommands;

  constructor(
    store: EventStore,
    private readonly live: LiveAccounts,
    private readonly sql: Sql,
    private readonly clock: () => Date = () => new Date(),
    /** Resolves once the change at this checkpoint is in force where requests are decided (every instance). */
    private readonly settled: (checkpoint: string) => Promise<void> = (checkpoint) =>
      live.waitFor(checkpoint),
  ) {
    this.commands = new SubAccountCommands(store);
  }

  async create(
    auth: KeyHolder,
    input: Required<Pick<SubAccountInput, 'name' | 'spend_cap_cents'>> & SubAccountInput,
    requestId: string,
  ) {
    const account = this.live.account(auth.accountId);
    if (!account) throw new RequestRefused('unauthenticated', 'Unknown account');
    const subAccountId = `sa_${randomBytes(12).toString('hex')}`;
    const { key, record } = generateKey();
    const decision = await this.commands.handle(
      subAccountId,
      {
        type: 'CreateSubAccount',
        subAccountId,
        accountId: auth.accountId,
        accountToppedUp: account.toppedUpNanos > 0n,
        name: input.name,
        externalRef: input.external_ref ?? null,
        spendCapNanos: BigInt(input.spend_cap_cents) * NANOS_PER_CENT,
        rateLimitRpm: Math.min(input.rate_limit_rpm ?? account.rateLimitRpm, account.rateLimitRpm),
        defaultTag: input.default_tag ?? null,
        key: record,
        reseller: resellerSettings(input, account.rateLimitTpm),
      },
      { now: this.clock(), correlationId: requestId },
    );
    if (decision.checkpoint) await this.settled(decision.checkpoint);
    return { ...(await this.get(auth, subAccountId)), key };
  }

  async list(auth: KeyHolder): Promise<SubAccountRecord[]> {
    const subs = this.live.subAccountsOf(auth.accountId);
    const spent = await this.spent(auth.accountId);
    const account = this.live.account(auth.accountId);
    const periods = await periodSpending(this.sql, auth.accountId, subs, spent, this.clock());
    return subs.map((sub) => ({
      ...toRecord(sub, spent.get(sub.subAccountId) ?? 0n, account),
      ...periodView(periods.get(sub.subAccountId)),
    }));
  }

  async get(auth: KeyHolder, id: string): Promise<SubAccountRecord> {
    const sub = this.owned(auth, id);
    const spent = await this.spent(auth.accountId, id);
    const periods = await periodSpending(this.sql, auth.accountId, [sub], spent, this.clock());
    return {
      ...toRecord(sub, spent.get(id) ?? 0n, this.live.account(auth.accountId)),
      ...periodView(periods.get(id)),
    };
  }

  async update(
    auth: KeyHolder,
    id: string,
    input: SubAccountInput,
    requestId: string,
  ): Promise<SubAccountRecord> {
    this.owned(auth, id);
    const account = this.live.account(auth.accountId);
    const decision = await this.commands.handle(
      id,
      {
        type: 'UpdateSubAccount',
        accountId: auth.accountId,
        changes: {
          name: input.name,
          externalRef: input.external_ref,
          spendCapNanos:
            input.spend_cap_cents === undefined ? undefined : BigInt(input.spend_cap_cents) * NANOS_PER_CENT,
          rateLimitRpm:
            input.rate_limit_rpm === undefined
              ? undefined
              : Math.min(input.rate_limit_rpm, account?.rateLimitRpm ?? input.rate_limit_rpm),
          defaultTag: input.default_tag,
          ...resellerSettings(input, account?.rateLimitTpm ?? null),
        },
      },
      { now: this.clock(), correlationId: requestId },
    );
    if (decision.checkpoint) await this.settled(decision.checkpoint);
    return this.get(auth, id);
  }

  async delete(auth: KeyHolder, id: string, requestId: string) {
    this.owned(auth, id);
    const decision = await this.commands.handle(
      id,
      { type: 'DeleteSubAccount', accountId: auth.accountId },
      { now: this.clock(), correlationId: requestId },
    );
    if (decision.checkpoint) await this.settled(decision.checkpoint);
    return { id, object: 'sub_account' as const, deleted: true };
  }

  /** A sub-account's statement of one UTC month, in its price. */
  statement(auth: KeyHolder, id: string, month: string): Promise<Statement> {
    return statementOf(this.sql, this.owned(auth, id), month);
  }

  /** What a sub-account key may still spend: its cap less what it spent this period, in its price. */
  async capLeft(auth: KeyHolder): Promise<bigint> {
    const sub = auth.subAccountId ? this.live.subAccount(auth.subAccountId) : undefined;
    if (!sub) return 0n;
    const lifetime = await this.spent(auth.accountId, sub.subAccountId);
    const periods = await periodSpending(this.sql, auth.accountId, [sub], lifetime, this.clock());
    return sub.spendCapNanos - (periods.get(sub.subAccountId)?.spentNanos ?? 0n);
  }

  private owned(auth: KeyHolder, id: string): LiveSubAccount {
    const sub = this.live.subAccount(id);
    if (!sub || sub.deleted || sub.accountId !== auth.accountId) {
      throw new RequestRefused('not_found', `No sub-account ${id}`);
    }
    return sub;
  }

  /** Lifetime spending per sub-account (in its price), from the usage read model. */
  private spent(accountId: string, subAccountId?: string): Promise<Map<string, bigint>> {
    return subAccountSpending(this.sql, accountId, subAccountId);
  }
}

/** The limits shown are those in force: the sub-account's own, never above its account's (even lowered since). */
function toRecord(
  sub: LiveSubAccount,
  spentNanos: bigint,
  account?: LiveAccount,
): Omit<SubAccountRecord, keyof ReturnType<typeof periodView>> {
  return {
    id: sub.subAccountId,
    object: 'sub_account',
    name: sub.name,
    external_ref: sub.externalRef,
    spend_cap_cents: Number(sub.spendCapNanos / NANOS_PER_CENT),
    rate_limit_rpm: Math.min(sub.rateLimitRpm, account?.rateLimitRpm ?? sub.rateLimitRpm),
    default_tag: sub.defaultTag,
    created_at: Math.floor(sub.createdAt.getTime() / 1000),
    spent_cents: nanosToCents(spentNanos),
    ...resellerView(sub),
    rate_limit_tpm: cappedTpm(sub.rateLimitTpm, account?.rateLimitTpm ?? null),
  };
}
