import type { z } from 'zod';
import type { ReplayCommands } from '../../commands/replay/handler.ts';
import type { GatewayEvent } from '../../events/index.ts';
import type { ShadowResumed } from '../../events/replay.ts';
import { RequestRefused } from '../contracts/errors.ts';

type ResumeReason = z.infer<typeof ShadowResumed>['reason'];

/** Whose money a shadow spends: the account, and the sub-account that asked for it, if one did. */
export interface ShadowPayer {
  replayId: string;
  accountId: string;
  subAccountId?: string | null;
  /** The POST that created the shadow: what its pauses and resumptions are caused by. */
  requestId: string;
}

/**
 * Events after which a payer refused for money may be able to pay: a top-up or a credit, a tag budget set or
 * removed, a new budget month (monthly budgets start again) for the whole account, a spend cap set for one
 * sub-account.
 */
function moneyBack(event: GatewayEvent): { key: string; reason: ResumeReason } | undefined {
  switch (event.type) {
    case 'AccountToppedUp':
      return { key: event.data.accountId, reason: 'topped_up' };
    case 'BalanceAdjusted':
      return BigInt(event.data.amountNanos) > 0n
        ? { key: event.data.accountId, reason: 'topped_up' }
        : undefined;
    case 'TagBudgetSet':
    case 'TagBudgetRemoved':
      return { key: event.data.accountId, reason: 'budget_set' };
    case 'BudgetMonthOpened':
      return { key: event.data.accountId, reason: 'new_month' };
    case 'SubAccountUpdated':
      return event.data.spendCapNanos === undefined
        ? undefined
        : { key: `${event.data.accountId}/${event.data.subAccountId}`, reason: 'cap_changed' };
    default:
      return undefined;
  }
}

const payerKeys = (payer: ShadowPayer) =>
  payer.subAccountId ? [payer.accountId, `${payer.accountId}/${payer.subAccountId}`] : [payer.accountId];

export interface ShadowPausesDeps {
  commands: ReplayCommands;
  clock: () => Date;
  report: (message: string, error?: unknown) => void;
}

/**
 * Pausing and resuming shadows whose payer cannot pay. A comparison refused for money (402: the balance, the
 * sub-account's spend cap or a tag's budget) pauses its shadow once (`ShadowPaused`, one log line): the shadow
 * then takes no further requests, so it neither tries nor logs again per request. It resumes by itself
 * (`ShadowResumed`) at the first event in the log after which the payer may be able to pay (`moneyBack`).
 * Everything here is decided from the log in log order, so a restart, reading it again, decides the same; a
 * resumption already recorded is not recorded twice (it names the pause it ends).
 */
export class ShadowPauses {
  /** Paused shadows, by replay id, with the number of their current pause. */
  private readonly paused = new Map<string, { payer: ShadowPayer; pause: number }>();
  /** When money last came back for each payer key (an account, or account/sub-account), in event time. */
  private readonly moneyAt = new Map<string, { at: number; reason: ResumeReason }>();
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly deps: ShadowPausesDeps) {}

  isPaused(replayId: string): boolean {
    return this.paused.has(replayId);
  }

  /** Follows one event of the log, with the live shadows by replay id. */
  follow(event: GatewayEvent, occurredAt: Date, shadows: ReadonlyMap<string, ShadowPayer>): void {
    switch (event.type) {
      case 'ShadowPaused': {
        const payer = shadows.get(event.data.replayId);
        if (!payer) return;
        const { pause } = event.data;
        this.paused.set(payer.replayId, { payer, pause });
        // Money that came back while the refused comparison was under way may have come too late for it.
        const since = Date.parse(event.data.triedAt);
        const money = payerKeys(payer)
          .map((key) => this.moneyAt.get(key))
          .find((seen) => seen !== undefined && seen.at >= since);
        if (money) this.resume(payer, pause, money.reason);
        return;
      }
      case 'ShadowResumed':
        if (this.paused.get(event.data.replayId)?.pause === event.data.pause)
          this.paused.delete(event.data.replayId);
        return;
      case 'ShadowStopped':
      case 'ReplayFailed':
        this.paused.delete(event.data.replayId);
        return;
      default: {
        const money = moneyBack(event);
        if (!money) return;
        this.moneyAt.set(money.key, { at: occurredAt.getTime(), reason: money.reason });
        for (const { payer, pause } of this.paused.values())
          if (payerKeys(payer).includes(money.key)) this.resume(payer, pause, money.reason);
      }
    }
  }

  /**
   * What to do with a comparison that failed: a refusal for money pauses the shadow (true); anything else is the
   * caller's to report (false).
   */
  async failed(payer: ShadowPayer, sourceRequestId: string, triedAt: Date, error: unknown): Promise<boolean> {
    if (
      !(error instanceof RequestRefused) ||
      (error.kind !== 'insufficient_balance' && error.kind !== 'budget_exceeded')
    )
      return false;
    const refusal = {
      reason: error.kind,
      message: error.message,
      sourceRequestId,
      triedAt: triedAt.toISOString(),
    };
    const decision = await this.deps.commands.handle(
      payer.replayId,
      { type: 'PauseShadow', refusal },
      { now: this.deps.clock(), causationId: payer.requestId },
    );
    // Comparisons refused together: the first records the pause and says so, the others are silent.
    if (decision.events.length > 0)
      this.deps.report(
        `shadow ${payer.replayId} paused, its payer refused a comparison (${error.message}); it resumes after a top-up, a cap or budget change, or a new month`,
      );
    return true;
  }

  /** Forgets what was followed: the log is about to be read again from its start. */
  clear(): void {
    this.paused.clear();
    this.moneyAt.clear();
  }

  /** Resolves once the resumptions asked for so far are recorded (or failed). */
  async settled(): Promise<void> {
    await Promise.all(this.pending);
  }

  private resume(payer: ShadowPayer, pause: number, reason: ResumeReason): void {
    const done: Promise<void> = this.deps.commands
      .handle(
        payer.replayId,
        { type: 'ResumeShadow', pause, reason },
        { now: this.deps.clock(), causationId: payer.requestId },
      )
      .then((decision) => {
        if (decision.events.length > 0) this.deps.report(`shadow ${payer.replayId} resumed (${reason})`);
      })
      .catch((error) => this.deps.report(`shadow ${payer.replayId}: resuming failed`, error))
      .finally(() => this.pending.delete(done));
    this.pending.add(done);
  }
}
