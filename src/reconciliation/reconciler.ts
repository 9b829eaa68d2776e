import type pg from 'pg';
import { deterministicEventId, parseAs, toNewEvent } from '../../events/index.ts';
import {
  type ProviderReconciled,
  type ReconciliationEvent,
  reconciliationStream,
} from '../../events/reconciliation.ts';
import { type EventStore, WrongExpectedRevisionError } from '../../events/store.ts';
import { invalidField, RequestRefused } from '../contracts/errors.ts';
import { compareSlices } from './compare.ts';
import { ledgerPassThrough } from './ledger.ts';
import { type ReconcileSettings, reconciliationOf } from './settings.ts';

type Reconciled = ReturnType<typeof ProviderReconciled.parse>;

export interface ReconcileOutcome {
  reconciliation: Reconciled;
  /** False when the figures were those of the latest run already: nothing was appended. */
  appended: boolean;
}

const DAY = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;

/**
 * Reconciles one provider's UTC day: its cost report against the ledger's pass-through, appended as
 * `ProviderReconciled` to the day's stream. Idempotent: a run that finds the figures of the latest run appends
 * nothing; one that finds others (late usage in the report, a charge settled late) appends the next run, which
 * replaces it. Two instances racing append once (the expected revision), the loser reading the winner's run.
 */
export class Reconciler {
  constructor(
    private readonly store: EventStore,
    private readonly pool: pg.Pool,
    readonly settings: ReconcileSettings,
    private readonly clock: () => Date,
    private readonly operatorAccountId: string | undefined,
    private readonly timeoutMs = 30_000,
  ) {}

  providers(): string[] {
    return [...this.settings.providers.keys()];
  }

  async reconcile(provider: string, day: string): Promise<ReconcileOutcome> {
    if (!DAY.test(day) || Number.isNaN(Date.parse(`${day}T00:00:00Z`)))
      throw invalidField('day', `a UTC day as YYYY-MM-DD, not ${day}`);
    if (Date.parse(`${day}T00:00:00Z`) > this.clock().getTime())
      throw invalidField('day', `${day} has not begun yet`);
    const settings = reconciliationOf(this.settings, provider);
    // The provider's refusal or outage reads as the API's upstream failure (502), never a 500.
    const report = await settings
      .report({
        baseUrl: settings.baseUrl,
        adminKey: settings.adminKey,
        day,
        timeoutMs: this.timeoutMs,
        signal: AbortSignal.timeout(this.timeoutMs * 2),
      })
      .catch((error: unknown) => {
        const status = (error as { status?: number }).status;
        throw new RequestRefused(
          'upstream_failed',
          `${provider}'s cost report failed${status ? ` (${status})` : ''}: ${(error as Error).message}`,
        );
      });
    const ledger = await ledgerPassThrough(this.pool, provider, day, settings.credentials);
    const threshold = this.settings.thresholdPercent;
    const rows = compareSlices(settings, ledger, report, threshold);
    const stream = reconciliationStream(provider, day);
    for (let attempt = 0; ; attempt++) {
      const past = await this.store.readStream(stream);
      const last = past.at(-1);
      const latest = last && parseAs<ReconciliationEvent>(last)?.data;
      if (
        latest &&
        latest.thresholdPercent === threshold &&
        JSON.stringify(latest.rows) === JSON.stringify(rows)
      )
        return { reconciliation: latest, appended: false };
      const sum = (pick: (r: (typeof rows)[number]) => string) =>
        rows.reduce((t, r) => t + BigInt(pick(r)), 0n);
      const run = (latest?.run ?? 0) + 1;
      const reconciliation: Reconciled = {
        provider,
        day,
        run,
        at: this.clock().toISOString(),
        thresholdPercent: threshold,
        rows,
        ledgerNanos: sum((r) => r.ledgerNanos).toString(),
        providerNanos: sum((r) => r.providerNanos).toString(),
        flagged: rows.some((r) => r.flagged),
        operatorAccountId: this.operatorAccountId ?? null,
      };
      const event = { type: 'ProviderReconciled' as const, data: reconciliation };
      try {
        await this.store.append(
          stream,
          [toNewEvent(event, deterministicEventId(`${stream}:${run}`), { now: this.clock() })],
          last ? last.revision : 'no_stream',
        );
        return { reconciliation, appended: true };
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError) || attempt >= 3) throw error;
      }
    }
  }
}
