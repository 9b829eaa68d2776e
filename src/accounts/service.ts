import { randomBytes } from 'node:crypto';
import type { NewKey } from '../../commands/account/decide.ts';
import { AccountCommands } from '../../commands/account/handler.ts';
import { BudgetLedger } from '../../commands/budget/handler.ts';
import { DomainError } from '../../commands/errors.ts';
import { NANOS_PER_CENT } from '../../events/money.ts';
import type { EventStore } from '../../events/store.ts';
import { type AdjustmentInput, type AdjustmentResult, Adjustments } from './adjustments.ts';
import { generateKey } from './keys.ts';

export const DEFAULT_RATE_LIMIT_RPM = 600;

export interface IssuedKey {
  account_id: string;
  key_id: string;
  key: string;
}

export interface TopUpResult {
  account_id: string;
  reference: string;
  cents: number;
  /** False when this reference was already recorded (the call changed nothing). */
  credited: boolean;
}

/** Resolves which account owns a key (from memory in the server, from the read model in the CLI). */
export type KeyOwnerLookup = (keyId: string) => Promise<string | undefined>;

/** Called with the checkpoint of each write before it is acknowledged (the server waits for its live state). */
export type AfterWrite = (checkpoint: string) => Promise<void>;

/** The operator's account actions, shared by the admin routes and the CLI's direct mode. */
export class AccountService {
  private readonly commands: AccountCommands;
  private readonly adjustments: Adjustments;

  constructor(
    store: EventStore,
    private readonly keyOwner: KeyOwnerLookup,
    private readonly afterWrite: AfterWrite = async () => {},
    private readonly clock: () => Date = () => new Date(),
    /** The budget streams' writer, shared with the gateway's spending so that one process has one per stream. */
    ledger: BudgetLedger = new BudgetLedger(store, clock),
  ) {
    this.commands = new AccountCommands(store);
    this.adjustments = new Adjustments(store, ledger, afterWrite);
  }

  private async handle(...args: Parameters<AccountCommands['handle']>) {
    const decision = await this.commands.handle(...args);
    if (decision.checkpoint) await this.afterWrite(decision.checkpoint);
    return decision;
  }

  async createAccount(
    name: string,
    correlationId?: string,
    initialCredit?: { cents: number; reference: string },
  ): Promise<IssuedKey> {
    const accountId = `acct_${randomBytes(12).toString('hex')}`;
    const { key, record } = generateKey();
    const initialTopUp = initialCredit && {
      reference: initialCredit.reference,
      amountNanos: BigInt(initialCredit.cents) * NANOS_PER_CENT,
    };
    await this.handle(
      accountId,
      {
        type: 'OpenAccount',
        accountId,
        name,
        rateLimitRpm: DEFAULT_RATE_LIMIT_RPM,
        key: record,
        initialTopUp,
      },
      { now: this.clock(), correlationId },
    );
    return { account_id: accountId, key_id: record.keyId, key };
  }

  async createKey(accountId: string, correlationId?: string): Promise<IssuedKey> {
    const { key, record } = generateKey();
    await this.issue(accountId, record, correlationId);
    return { account_id: accountId, key_id: record.keyId, key };
  }

  private async issue(accountId: string, key: NewKey, correlationId?: string): Promise<void> {
    await this.handle(accountId, { type: 'IssueKey', key }, { now: this.clock(), correlationId });
  }

  async revokeKey(
    keyId: string,
    correlationId?: string,
  ): Promise<{ key_id: string; account_id: string; revoked: true }> {
    const accountId = await this.keyOwner(keyId);
    if (!accountId) throw new DomainError('not_found', `key ${keyId} not found`, 'key_id');
    await this.handle(accountId, { type: 'RevokeKey', keyId }, { now: this.clock(), correlationId });
    return { key_id: keyId, account_id: accountId, revoked: true };
  }

  async setTagBudget(
    accountId: string,
    tag: string,
    capCents: number,
    correlationId?: string,
  ): Promise<void> {
    await this.handle(
      accountId,
      { type: 'SetTagBudget', tag, capNanos: BigInt(capCents) * NANOS_PER_CENT },
      { now: this.clock(), correlationId },
    );
  }

  /** Lifts a tag's monthly cap: the tag is uncapped from the next request on. */
  async removeTagBudget(accountId: string, tag: string, correlationId?: string): Promise<void> {
    await this.handle(accountId, { type: 'RemoveTagBudget', tag }, { now: this.clock(), correlationId });
  }

  /** A credit or debit of the balance with its reason, once per reference (see ./adjustments.ts). */
  adjust(accountId: string, input: AdjustmentInput): Promise<AdjustmentResult> {
    return this.adjustments.adjust(accountId, input);
  }

  async changeSettings(
    accountId: string,
    settings: {
      rateLimitRpm?: number;
      /** null lifts the account's tokens-per-minute limit. */
      rateLimitTpm?: number | null;
      balanceLowCents?: number;
      requestBodies?: 'keep' | 'drop' | null;
      requestRetentionDays?: number | null;
      routing?: { allowed: string[] | null; excluded: string[] } | null;
      mcpWriteTools?: boolean;
      cacheDefault?: 'auto' | 'force' | 'semantic' | 'skip';
      byokSubAccounts?: boolean;
      byokFallback?: boolean;
    },
    correlationId?: string,
  ): Promise<void> {
    await this.handle(
      accountId,
      {
        type: 'ChangeSettings',
        rateLimitRpm: settings.rateLimitRpm,
        rateLimitTpm: settings.rateLimitTpm,
        balanceLowThresholdNanos:
          settings.balanceLowCents === undefined
            ? undefined
            : BigInt(settings.balanceLowCents) * NANOS_PER_CENT,
        requestBodies: settings.requestBodies,
        requestRetentionDays: settings.requestRetentionDays,
        routing: settings.routing,
        mcpWriteTools: settings.mcpWriteTools,
        cacheDefault: settings.cacheDefault,
        byokSubAccounts: settings.byokSubAccounts,
        byokFallback: settings.byokFallback,
      },
      { now: this.clock(), correlationId },
    );
  }

  /** Where the account's lifecycle webhooks go; null stops them. The URL is checked by the caller. */
  async setWebhookEndpoint(accountId: string, url: string | null, correlationId?: string): Promise<void> {
    await this.handle(accountId, { type: 'SetWebhookEndpoint', url }, { now: this.clock(), correlationId });
  }

  async summarizeDay(
    accountId: string,
    day: string,
    usage: { requests: number; costNanos: bigint; units: number },
  ): Promise<void> {
    await this.handle(accountId, { type: 'SummarizeDay', day, ...usage }, { now: this.clock() });
  }

  /**
   * Records a refund of a top-up: `refundedCents` is the top-up's refunded total as the processor reports it, so
   * the same report delivered again reverses nothing more.
   */
  async reverseTopUp(
    accountId: string,
    reference: string,
    refundedCents: number,
    refundReference: string,
    correlationId?: string,
  ): Promise<{ reversed_cents: number }> {
    const { events } = await this.handle(
      accountId,
      {
        type: 'ReverseTopUp',
        reference,
        refundedNanos: BigInt(refundedCents) * NANOS_PER_CENT,
        refundReference,
      },
      { now: this.clock(), correlationId },
    );
    const reversed = events.reduce(
      (sum, e) => (e.type === 'AccountTopUpReversed' ? sum + BigInt(e.data.amountNanos) : sum),
      0n,
    );
    return { reversed_cents: Number(reversed / NANOS_PER_CENT) };
  }

  async topUp(
    accountId: string,
    cents: number,
    reference: string,
    correlationId?: string,
  ): Promise<TopUpResult> {
    if (!Number.isSafeInteger(cents) || cents <= 0) {
      throw new DomainError('invalid', 'cents must be a positive integer', 'cents');
    }
    const { events } = await this.handle(
      accountId,
      { type: 'TopUp', reference, amountNanos: BigInt(cents) * NANOS_PER_CENT },
      { now: this.clock(), correlationId },
    );
    return { account_id: accountId, reference, cents, credited: events.length > 0 };
  }
}
