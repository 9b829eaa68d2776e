import { z } from 'zod';
import { Nanos } from './money.ts';

/**
 * Events of the `reconciliation-{provider}_{yyyymmdd}` streams: the ledger's pass-through for one provider and UTC day
 * set beside what the provider's own cost report bills for it, per credential and model (docs/billing.md,
 * Reconciliation). A stream holds one event per run whose figures differ from the run before; the latest stands.
 */

const Day = z.string().regex(/^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/);

export const ReconciliationRow = z.object({
  /**
   * The pool credential(s) the provider's report group stands for (`a+b` when several share one project or
   * workspace), `*` when the report is the provider's whole organization, or the report's own group
   * (`project:…`, `workspace:…`) when no credential maps to it.
   */
  credential: z.string(),
  /** The gateway's model id (`openai/gpt-4o-mini`). */
  model: z.string(),
  ledgerNanos: Nanos,
  providerNanos: Nanos,
  /** provider − ledger: positive when the provider bills more than the ledger passed through. */
  varianceNanos: Nanos,
  /** variance ÷ ledger × 100, to two decimals (toward zero); null when the ledger has nothing for the slice. */
  variancePercent: z.number().nullable(),
  /** |variance| is above the threshold (any variance when the ledger has nothing). */
  flagged: z.boolean(),
});

export const ProviderReconciled = z.object({
  provider: z.string(),
  day: Day,
  /** 1 for the first reconciliation of the provider and day; a re-run that finds other figures replaces it. */
  run: z.number().int().min(1),
  at: z.iso.datetime({ offset: true }),
  thresholdPercent: z.number().min(0),
  rows: z.array(ReconciliationRow),
  ledgerNanos: Nanos,
  providerNanos: Nanos,
  flagged: z.boolean(),
  /** Whom the `reconciliation.variance` notice goes to when a row is flagged: the operator's account, if set. */
  operatorAccountId: z.string().nullable(),
});

export const reconciliationEventSchemas = { ProviderReconciled } as const;

export type ReconciliationEvent = { type: 'ProviderReconciled'; data: z.infer<typeof ProviderReconciled> };
export type ReconciliationRowData = z.infer<typeof ReconciliationRow>;

export const reconciliationStream = (provider: string, day: string) =>
  `reconciliation-${provider}_${day.replaceAll('-', '')}`;
