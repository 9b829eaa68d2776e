import type { ReconciliationRowData } from '../../events/reconciliation.ts';
import type { CostReportRow } from '../contracts/cost-report.ts';
import type { ProviderReconciliation } from './settings.ts';

/** The label of a slice both sides are summed under: the credentials sharing a report group, or `*` for all. */
function labels(settings: ProviderReconciliation) {
  const byGroup = new Map<string, string[]>();
  for (const [name, group] of settings.groupOf) byGroup.set(group, [...(byGroup.get(group) ?? []), name]);
  const whole = settings.groupOf.size === 0;
  return {
    ofCredential: (name: string) => {
      if (whole) return '*';
      const group = settings.groupOf.get(name);
      return group === undefined ? name : (byGroup.get(group) as string[]).join('+');
    },
    ofGroup: (group: string | null) => {
      if (whole) return '*';
      const names = group === null ? undefined : byGroup.get(group);
      return names ? names.join('+') : `${settings.groupKind}:${group ?? 'default'}`;
    },
  };
}

/**
 * Both sides per label and model, with the variance: provider − ledger, its percent of the ledger (two decimals,
 * toward zero), and whether it is above the threshold. Exact integer arithmetic throughout.
 */
export function compareSlices(
  settings: ProviderReconciliation,
  ledger: { credential: string; model: string; nanos: bigint }[],
  report: CostReportRow[],
  thresholdPercent: number,
): ReconciliationRowData[] {
  const { ofCredential, ofGroup } = labels(settings);
  const slices = new Map<string, { credential: string; model: string; ledger: bigint; provider: bigint }>();
  const slice = (credential: string, model: string) => {
    const key = JSON.stringify([credential, model]);
    const found = slices.get(key) ?? { credential, model, ledger: 0n, provider: 0n };
    slices.set(key, found);
    return found;
  };
  for (const row of ledger) slice(ofCredential(row.credential), row.model).ledger += row.nanos;
  for (const row of report) {
    const model = `${settings.provider}/${row.model ?? '(not a model)'}`;
    slice(ofGroup(row.group), model).provider += row.nanos;
  }
  const thresholdBasisPoints = BigInt(Math.round(thresholdPercent * 100));
  return [...slices.values()]
    .sort((a, b) => a.credential.localeCompare(b.credential) || a.model.localeCompare(b.model))
    .map((s) => {
      const variance = s.provider - s.ledger;
      const magnitude = variance < 0n ? -variance : variance;
      const percent = s.ledger === 0n ? null : Number((variance * 10_000n) / s.ledger) / 100;
      const flagged =
        s.ledger === 0n ? magnitude > 0n : magnitude * 10_000n > thresholdBasisPoints * s.ledger;
      return {
        credential: s.credential,
        model: s.model,
        ledgerNanos: s.ledger.toString(),
        providerNanos: s.provider.toString(),
        varianceNanos: variance.toString(),
        variancePercent: percent,
        flagged,
      };
    });
}
