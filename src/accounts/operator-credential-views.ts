import { NANOS_PER_CENT } from '../../events/money.ts';
import type { CredentialPools, CredentialReport, CredentialSpec } from '../providers/credentials/pool.ts';
import type { CredentialRow } from './operator-credential-store.ts';

/**
 * A credential as the admin API shows it: its standing as the health report has it, and for the operator alone where
 * it comes from, its secret's last four characters and its limits. Never the secret.
 */
export interface CredentialView extends CredentialReport {
  /** `api`: added through the admin API or CLI; `config`: the config file or the environment. */
  source: 'api' | 'config';
  last4: string;
  limits: { rpm: number | null; tpm: number | null; monthly_spend_cents: number | null };
}

/**
 * The secret's last four characters, to recognise it by: fewer for a key shorter than 16, so that no more than a
 * quarter of a secret is ever shown (a made-up short key would otherwise be shown whole).
 */
export const last4Of = (key: string): string =>
  key.slice(key.length - Math.min(4, Math.floor(key.length / 4)));

/** The pool's credential from a stored row and its opened secret. */
export function specOf(row: CredentialRow, key: string): CredentialSpec {
  const limits = {
    ...(row.rpm !== null && { rpm: row.rpm }),
    ...(row.tpm !== null && { tpm: row.tpm }),
    ...(row.monthlySpendNanos !== null && { monthlySpendNanos: BigInt(row.monthlySpendNanos) }),
  };
  return { name: row.name, key, weight: row.weight, ...(Object.keys(limits).length > 0 && { limits }) };
}

/** The provider's credentials as the operator sees them. */
export function credentialViews(
  pools: CredentialPools,
  provider: string,
  isAdded: (provider: string, name: string) => boolean,
  reports: CredentialReport[] = pools.credentialsOf(provider),
): CredentialView[] {
  return reports.map((report) => {
    const spec = pools.spec(provider, report.name);
    const spend = spec?.limits?.monthlySpendNanos;
    return {
      ...report,
      source: isAdded(provider, report.name) ? 'api' : 'config',
      last4: spec ? last4Of(spec.key) : '',
      limits: {
        rpm: spec?.limits?.rpm ?? null,
        tpm: spec?.limits?.tpm ?? null,
        monthly_spend_cents: spend === undefined ? null : Number(spend / NANOS_PER_CENT),
      },
    };
  });
}
