import { type BudgetEvent, budgetStream, monthOf, nextMonth, previousMonth } from '../../events/budget.ts';
import { deterministicEventId, parseAs, toNewEvent } from '../../events/index.ts';
import type { EventStore } from '../../events/store.ts';
import { type Decision, StreamWriter } from '../stream-writer.ts';
import { type BudgetCommand, type Carried, decide, MonthUnavailable } from './decide.ts';
import { carriedDays } from './resold.ts';
import { type BudgetState, evolve, initialState } from './state.ts';

export type BudgetDecision = Decision<BudgetState, BudgetEvent>;

/**
 * The account's spending, one stream per UTC month. Commands go to the current month's stream through one
 * in-process writer per stream; a month is opened (carrying lifetime charges and open holds over) the first
 * time it is needed, after closing the month before.
 */
export class BudgetLedger {
  private readonly writer: StreamWriter<BudgetState, BudgetCommand, BudgetEvent>;
  private readonly opened = new Set<string>();

  constructor(
    store: EventStore,
    private readonly clock: () => Date = () => new Date(),
  ) {
    this.writer = new StreamWriter(store, {
      initialState,
      evolve,
      decide,
      parse: (stored) => parseAs<BudgetEvent>(stored),
      // A hold refused for want of room (no notice left to raise) appends nothing: another instance may have made
      // room (a settle, a release, a credit) since this one last read the stream.
      refusesQuietly: (command, events) =>
        (command.type === 'Reserve' || command.type === 'Charge' || command.type === 'Lease') &&
        !events.some((e) => e.type === 'SpendReserved'),
      serialize: (event, _command, stream) =>
        toNewEvent(event, deterministicEventId(eventName(stream, event)), { now: this.clock() }),
    });
  }

  /** Submits a command to the account's current month, opening it first if need be. */
  async submit(
    accountId: string,
    firstMonth: string,
    command: BudgetCommand,
    options: {
      /** Write-behind: the command rides in the stream's next append, or in one of its own after `lazyMs`. */
      lazyMs?: number;
      /** Called once the command is in the stream's queue: commands submitted after it are decided after it. */
      onQueued?: () => void;
    } = {},
  ): Promise<BudgetDecision> {
    // A clock behind the account's first month (an instance a moment behind the one that opened the account, at a
    // month's turn) spends in that first month: a month before it was never the account's, and opening one would
    // start a second ledger from nothing.
    const now = monthOf(this.clock());
    let month = now < firstMonth ? firstMonth : now;
    for (let attempt = 0; attempt < 3; attempt++) {
      await this.ensureOpen(accountId, month, firstMonth);
      try {
        const decided = this.writer.submit(
          budgetStream(accountId, month),
          command,
          options.lazyMs === undefined ? {} : { lazyMs: options.lazyMs },
        );
        options.onQueued?.();
        return await decided;
      } catch (error) {
        // Another instance's clock already moved the account into the next month.
        if (!(error instanceof MonthUnavailable) || error.state !== 'closed') throw error;
        this.opened.delete(`${accountId}/${month}`);
        month = nextMonth(month);
      }
    }
    throw new Error(`could not find an open budget month for ${accountId}`);
  }

  private async ensureOpen(accountId: string, month: string, firstMonth: string): Promise<void> {
    const key = `${accountId}/${month}`;
    if (this.opened.has(key)) return;
    let carried: Carried = { lifetimeChargedNanos: 0n, subAccountChargedNanos: new Map(), openHolds: [] };
    if (month > firstMonth) {
      const before = previousMonth(month);
      await this.ensureOpen(accountId, before, firstMonth);
      const closed = await this.writer.submit(budgetStream(accountId, before), { type: 'CloseMonth' });
      carried = {
        lifetimeChargedNanos: closed.state.lifetimeChargedNanos,
        subAccountChargedNanos: closed.state.subAccountCharged,
        openHolds: [...closed.state.holds.values()],
        adjustedNanos: closed.state.adjustedNanos,
        adjustments: closed.state.adjustments,
        subAccountDayChargedNanos: carriedDays(closed.state),
      };
    }
    await this.writer.submit(budgetStream(accountId, month), {
      type: 'OpenMonth',
      accountId,
      month,
      carried,
    });
    this.opened.add(key);
  }
}

/** Ids derive from what the event is about, so a retried command can never be stored twice. */
function eventName(stream: string, event: BudgetEvent): string {
  const data = event.data as {
    holdId?: string;
    tag?: string;
    subAccountId?: string;
    thresholdPercent?: number;
  };
  switch (event.type) {
    case 'SpendReserved':
    case 'SpendSettled':
    case 'SpendOverrun':
    case 'SpendReleased':
      return `${event.data.accountId}/hold/${data.holdId}/${event.type}`;
    case 'RequestCompleted':
      return `${event.data.accountId}/request/${event.data.logId}`;
    case 'BalanceAdjusted':
      return `${event.data.accountId}/adjustment/${event.data.reference}`;
    case 'TagUsageThresholdExceeded':
      return `${stream}/${event.type}/${data.tag}/${data.thresholdPercent}`;
    case 'SubAccountSpendExceeded':
      // Once per month, or once per period of a renewing cap.
      return event.data.periodStart === undefined
        ? `${stream}/${event.type}/${data.subAccountId}`
        : `${stream}/${event.type}/${data.subAccountId}/${event.data.periodStart}`;
    default:
      // Month opening and closing, and the once-a-month balance notices.
      return `${stream}/${event.type}`;
  }
}
