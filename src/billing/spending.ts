import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import {
  type BudgetCommand,
  binding,
  type Limits,
  leasedIn,
  type ReserveCommand,
} from '../../commands/budget/decide.ts';
import type { BudgetLedger } from '../../commands/budget/handler.ts';
import { customerPrice } from '../../commands/budget/markup.ts';
import { dayOf } from '../../commands/budget/periods.ts';
import { pricedTotal } from '../../commands/budget/resold.ts';
import type { BudgetEvent, ChargeDetail } from '../../events/budget.ts';
import { monthOf } from '../../events/budget.ts';
import type { RequestRecord } from '../../events/request.ts';
import type { KeyHolder, LiveAccounts } from '../accounts/live-state.ts';
import { allowedModelsOf } from '../accounts/model-access.ts';
import { RequestRefused } from '../contracts/errors.ts';
import type { Charge } from '../contracts/money.ts';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import { type Admitted, SpendLeases } from './leases.ts';
import { priceBookFor } from './price-book.ts';
import { HoldRefused, refusal } from './refusal.ts';
import type { RequestLog } from './request-log.ts';

export { HoldRefused };

/** How long an unsettled hold lives before the expiry worker releases it. */
export const HOLD_TTL_MS = 15 * 60 * 1000;
const SETTLE_ATTEMPTS = 6;
/**
 * How long a request that only other instances' leases keep out waits for them to be returned (an unused lease is
 * returned within two of its 200 ms sweeps), once: each try is a decision in the account's stream, and under a
 * flood of refusals more tries cost the event loop more than they win.
 */
const LEASE_WAIT_MS = 400;
const LEASE_WAITS = 1;
/**
 * While the database itself is away (a restart, a failover), a settlement keeps trying this long: the provider has
 * billed, and the answer is held back until its charge is durable.
 */
const SETTLE_OUTAGE_MS = 30_000;

export interface Hold {
  holdId: string;
  requestId: string;
  grantedNanos: bigint;
  accountId: string;
  limits: Limits;
  /** The request's record, settled with the hold (absent for work no client request stands behind). */
  log?: RequestLog;
  /**
   * For a hold admitted under a spend lease: its carving from the lease, kept in memory and carried by the
   * settlement (stored on its own only if the lease is returned first), and the lease's record of it.
   */
  carve?: ReserveCommand;
  leased?: Admitted;
}

export interface SettleInput {
  actualNanos: bigint;
  model: string;
  provider: string;
  /** The provider credential that served, by name. */
  credential?: string;
  charge: Charge;
  usageReported: boolean;
  units: number;
  /** The cost the request's record reports, when the request spans several holds (a realtime stream's slices). */
  loggedNanos?: bigint;
}

/**
 * Reservations against every cap at once (the account's balance, the sub-account's spend cap, the tag's monthly
 * budget), then settlement of the actual cost. The two-phase shape of a TigerBeetle transfer: reserve, post at
 * most the reserved amount, release the rest; release on failure; holds expire.
 */
export class Spending {
  private readonly leases: SpendLeases | undefined;

  constructor(
    private readonly ledger: BudgetLedger,
    private readonly live: LiveAccounts,
    private readonly clock: () => Date = () => new Date(),
    options: { leases?: boolean } = {},
  ) {
    this.leases = options.leases === false ? undefined : new SpendLeases(ledger, HOLD_TTL_MS, clock);
  }

  /** Returns this instance's spend leases (at shutdown), so their headroom is free before they expire. */
  returnLeases(): Promise<void> {
    return this.leases?.returnAll() ?? Promise.resolve();
  }

  /**
   * The scopes a request of `auth` under `tag` spends against. A sub-account spends under its own default tag
   * whatever tag it names (none when it has none), so that no header moves its spending out of the budget its
   * account set for it or into a budget of the account's own; the tag it named is kept as its label.
   */
  limits(auth: KeyHolder, tag: string | null, model?: string): Limits {
    const account = this.live.account(auth.accountId);
    if (!account) throw new RequestRefused('unauthenticated', 'Unknown account');
    const sub = auth.subAccountId ? this.live.subAccount(auth.subAccountId) : undefined;
    const scope = auth.subAccountId ? (sub?.defaultTag ?? null) : tag;
    return {
      toppedUpNanos: account.toppedUpNanos,
      balanceLowThresholdNanos: account.balanceLowThresholdNanos,
      // A sub-account's cap is in its own price: the price book for the model turns the account's cost into it.
      subAccount: sub
        ? {
            id: sub.subAccountId,
            capNanos: sub.spendCapNanos,
            reset: sub.spendCapReset,
            price: priceBookFor(sub, model),
          }
        : null,
      tag: scope === null ? null : { name: scope, capNanos: account.tagBudgets.get(scope) ?? null },
      ...(tag !== null && tag !== scope && { label: tag }),
      today: dayOf(this.clock()),
    };
  }

  /** The model patterns `auth` may use (accounts/model-access.ts): what every hold of its requests is checked against. */
  allowedModels(auth: KeyHolder): readonly string[] | null {
    return allowedModelsOf(this.live, auth);
  }

  /**
   * The account's first month, where the chain of carried balances starts. An account this instance has not
   * heard of yet is refused rather than guessed at: a guess could open a month without its carry-over.
   */
  private firstMonth(accountId: string): string {
    const account = this.live.account(accountId);
    if (!account) throw new Error(`account ${accountId} is not known to this instance yet`);
    return monthOf(account.openedAt);
  }

  /** Holds between `minNanos` and `maxNanos` (as much as every scope allows), or refuses with 402. */
  async reserve(
    auth: KeyHolder,
    request: {
      requestId: string;
      tag: string | null;
      minNanos: bigint;
      maxNanos: bigint;
      /** How long the hold lives unsettled; long-running work (jobs, batches) holds for longer. */
      ttlMs?: number;
      log?: RequestLog;
      /** The catalog id of the model the hold is for: a sub-account's price book prices it. */
      model?: string;
    },
  ): Promise<Hold> {
    const limits = this.limits(auth, request.tag, request.model);
    const holdId = `hold_${randomUUID().replaceAll('-', '')}`;
    const firstMonth = this.firstMonth(auth.accountId);
    const expiresAt = new Date(this.clock().getTime() + (request.ttlMs ?? HOLD_TTL_MS)).toISOString();
    // Long-lived holds (jobs, batches) outlive any lease; they are held on their own.
    const admitted =
      request.ttlMs === undefined
        ? await this.leases?.admit(auth.accountId, firstMonth, limits, request.maxNanos, (leaseId) => ({
            type: 'Reserve',
            holdId,
            requestId: request.requestId,
            minNanos: request.maxNanos,
            maxNanos: request.maxNanos,
            expiresAt,
            limits,
            leaseId,
          }))
        : undefined;
    if (admitted !== undefined) {
      return {
        holdId,
        requestId: request.requestId,
        grantedNanos: request.maxNanos,
        accountId: auth.accountId,
        limits,
        carve: admitted.carved.command,
        leased: admitted,
        ...(request.log && { log: request.log }),
      };
    }
    const command: BudgetCommand = {
      type: 'Reserve',
      holdId,
      requestId: request.requestId,
      minNanos: request.minNanos,
      maxNanos: request.maxNanos,
      expiresAt,
      limits,
    };
    let decision = await this.ledger.submit(auth.accountId, firstMonth, command);
    let reserved = decision.events.find((e) => e.type === 'SpendReserved');
    // Near a cap, other instances' leases may hold the room this request needs; they return what they do not use
    // within moments, so the request waits for that before it is refused.
    for (let wait = 0; !reserved && wait < LEASE_WAITS; wait++) {
      const tightest = binding(decision.state, limits);
      const leased = leasedIn(decision.state, limits, tightest.scope);
      if (leased === 0n || tightest.remainingNanos + leased < request.minNanos) break;
      await new Promise((resolve) => setTimeout(resolve, LEASE_WAIT_MS));
      decision = await this.ledger.submit(auth.accountId, firstMonth, command);
      reserved = decision.events.find((e) => e.type === 'SpendReserved');
    }
    if (!reserved) throw refusal(binding(decision.state, limits), request.minNanos, limits);
    return {
      holdId,
      requestId: request.requestId,
      grantedNanos: BigInt(reserved.data.amountNanos),
      accountId: auth.accountId,
      limits,
      ...(request.log && { log: request.log }),
    };
  }

  /**
   * Settles the hold at what the provider billed (in the account's money); resolves, once durable, with what the
   * request was charged in its requester's money: a sub-account's price, else the same amount.
   */
  async settle(hold: Hold, input: SettleInput): Promise<bigint> {
    const charge = chargeDetail(input);
    // The provider has billed by now: a settlement that fails for a passing reason is tried again rather than
    // left for the expiry worker, which would release the hold and lose the charge. (A settle is idempotent.)
    const request = hold.log?.finish({
      status: 200,
      costNanos: input.loggedNanos ?? input.actualNanos,
      holdId: hold.holdId,
      ...(input.credential !== undefined && { credential: input.credential }),
    });
    {
      const events = await this.settleDurably(hold, charge, input, request);
      // Decided: the lease has nothing of this hold left to store.
      hold.leased?.end();
      const book = hold.limits.subAccount?.price;
      const charged = events.some((e) => e.type === 'SpendSettled')
        ? pricedTotal(events)
        : // Settled before (a retried append that had landed): its price as the hold's price book makes it.
          book
          ? customerPrice(input.actualNanos, book.markupBasisPoints)
          : input.actualNanos;
      if (hold.log) hold.log.costNanos = loggedBefore(input) + charged;
      return charged;
    }
  }

  private async settleDurably(
    hold: Hold,
    charge: z.infer<typeof ChargeDetail>,
    input: SettleInput,
    request: RequestRecord | undefined,
  ): Promise<BudgetEvent[]> {
    const started = Date.now();
    for (let attempt = 1; ; attempt++) {
      const account = this.live.account(hold.accountId);
      try {
        const decision = await this.ledger.submit(hold.accountId, this.firstMonth(hold.accountId), {
          type: 'Settle',
          holdId: hold.holdId,
          requestId: hold.requestId,
          actualNanos: input.actualNanos,
          charge,
          // Settlement notices use the freshest balance, and the charge counts on the day it is made; the scopes
          // and the price book stay those of the hold.
          limits: {
            ...hold.limits,
            toppedUpNanos: account?.toppedUpNanos ?? hold.limits.toppedUpNanos,
            today: dayOf(this.clock()),
          },
          ...(request && { request }),
          ...(hold.carve && { carve: hold.carve }),
          ...(input.loggedNanos !== undefined && { loggedBeforeNanos: loggedBefore(input) }),
        });
        return decision.events;
      } catch (error) {
        const waiting = isDatabaseUnavailable(error) && Date.now() - started < SETTLE_OUTAGE_MS;
        if (attempt >= SETTLE_ATTEMPTS && !waiting) throw error;
        await new Promise((resolve) => setTimeout(resolve, Math.min(100 * 2 ** attempt, 2000)));
      }
    }
  }

  /**
   * Ends a hold that served nothing. A hold carved from a lease in memory ends with no event at all: the lease still
   * holds its amount, and is returned whole; once its carve was stored (the lease was returned first), its release
   * is stored too.
   */
  async release(hold: Hold, reason: 'failed' | 'cancelled'): Promise<void> {
    if (hold.leased && !hold.leased.carved.stored) {
      hold.leased.end();
      return;
    }
    await this.ledger.submit(hold.accountId, this.firstMonth(hold.accountId), {
      type: 'Release',
      holdId: hold.holdId,
      reason,
    });
    hold.leased?.end();
  }

  /**
   * A charge whose amount is known before anything is served (a cached answer): one append that holds and settles
   * it together, refused with 402 like a reservation when a scope has no room for the whole amount.
   */
  async charge(
    auth: KeyHolder,
    request: { requestId: string; tag: string | null; log?: RequestLog },
    input: Omit<SettleInput, 'actualNanos' | 'loggedNanos'>,
  ): Promise<bigint> {
    const limits = this.limits(auth, request.tag, input.model);
    const holdId = `hold_${randomUUID().replaceAll('-', '')}`;
    const chargedNanos = input.charge.chargedNanos;
    const record = request.log?.finish({ status: 200, costNanos: chargedNanos, holdId });
    const command: BudgetCommand = {
      type: 'Charge',
      holdId,
      requestId: request.requestId,
      chargedNanos,
      charge: chargeDetail(input),
      expiresAt: this.clock().toISOString(),
      limits,
      ...(record && { request: record }),
    };
    const firstMonth = this.firstMonth(auth.accountId);
    let decision = await this.ledger.submit(auth.accountId, firstMonth, command);
    const charged = () => decision.events.some((e) => e.type === 'SpendSettled');
    // As a reservation does: room that other instances' leases hold comes back within moments.
    for (let wait = 0; !charged() && wait < LEASE_WAITS; wait++) {
      const tightest = binding(decision.state, limits);
      const leased = leasedIn(decision.state, limits, tightest.scope);
      if (leased === 0n || tightest.remainingNanos + leased < chargedNanos) break;
      await new Promise((resolve) => setTimeout(resolve, LEASE_WAIT_MS));
      decision = await this.ledger.submit(auth.accountId, firstMonth, command);
    }
    if (!charged()) {
      request.log?.reopen();
      throw refusal(binding(decision.state, limits), chargedNanos, limits);
    }
    const price = pricedTotal(decision.events);
    if (request.log) request.log.costNanos = price;
    return price;
  }

  /** A request that settled nothing (a refusal, a failure): its record joins the budget stream's next append. */
  async logRequest(request: RequestRecord): Promise<void> {
    await this.ledger.submit(request.accountId, this.firstMonth(request.accountId), {
      type: 'LogRequest',
      request,
    });
  }

  async expire(accountId: string): Promise<number> {
    const decision = await this.ledger.submit(accountId, this.firstMonth(accountId), {
      type: 'ExpireHolds',
      now: this.clock(),
    });
    return decision.events.length;
  }
}

function chargeDetail(input: Omit<SettleInput, 'actualNanos' | 'loggedNanos'>): z.infer<typeof ChargeDetail> {
  return {
    model: input.model,
    provider: input.provider,
    ...(input.credential && { credential: input.credential }),
    lines: input.charge.lines.map((l) => ({
      ...l,
      unitPriceNanosPerMillion: l.unitPriceNanosPerMillion.toString(),
    })),
    passThroughNanos: input.charge.passThroughNanos.toString(),
    feeNanos: input.charge.feeNanos.toString(),
    discount: input.charge.discount,
    discountNanos: input.charge.discountNanos.toString(),
    usageReported: input.usageReported,
    units: input.units,
  };
}

/** What a request's earlier holds charged it (a realtime stream's slices), in its requester's money. */
const loggedBefore = (input: SettleInput): bigint =>
  input.loggedNanos === undefined ? 0n : input.loggedNanos - input.actualNanos;
