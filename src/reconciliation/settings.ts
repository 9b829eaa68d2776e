import type { CostReporter } from '../contracts/cost-report.ts';
import { invalidField } from '../contracts/errors.ts';
import { anthropicCostReport } from '../providers/anthropic/cost-report.ts';
import { openAiCostReport } from '../providers/openai/cost-report.ts';
import { baseUrlOf } from '../providers/registry.ts';

/** The providers that publish a cost report, the variable naming each credential's report group, and its client. */
const REPORTERS: Record<string, { groups: string; groupKind: string; report: CostReporter }> = {
  openai: { groups: 'OPENAI_RECONCILE_PROJECTS', groupKind: 'project', report: openAiCostReport },
  anthropic: {
    groups: 'ANTHROPIC_RECONCILE_WORKSPACES',
    groupKind: 'workspace',
    report: anthropicCostReport,
  },
};

export interface ProviderReconciliation {
  provider: string;
  adminKey: string;
  baseUrl: string;
  report: CostReporter;
  /** `project` or `workspace`: how an unmapped report group is named. */
  groupKind: string;
  /** The operator's credentials of the provider: the only charges the provider's organization bills. */
  credentials: string[];
  /** Credential → its project or workspace id; empty: the whole organization against every credential. */
  groupOf: Map<string, string>;
}

export interface ReconcileSettings {
  providers: Map<string, ProviderReconciliation>;
  /** A row whose |variance| is above this percent of the ledger's figure is flagged. */
  thresholdPercent: number;
}

/**
 * From the environment (docs/providers.md#reconciliation):
 * `<PROVIDER>_ADMIN_KEY` turns a provider's reconciliation on; `OPENAI_RECONCILE_PROJECTS` /
 * `ANTHROPIC_RECONCILE_WORKSPACES` (`credential=id,…`) say which project or workspace each pool credential lives in;
 * `GATEWAY_RECONCILE_THRESHOLD_PERCENT` (default 2) when a variance is flagged.
 */
export function reconcileSettings(
  env: NodeJS.ProcessEnv,
  pools: Record<string, { name: string }[]>,
): ReconcileSettings {
  const rawThreshold = env.GATEWAY_RECONCILE_THRESHOLD_PERCENT ?? '2';
  const thresholdPercent = Number(rawThreshold);
  if (!/^\d+(\.\d{1,2})?$/.test(rawThreshold) || thresholdPercent > 1000)
    throw new Error(
      `invalid configuration: GATEWAY_RECONCILE_THRESHOLD_PERCENT: a percent from 0 to 1000 with at most two decimals, not ${rawThreshold}`,
    );
  const providers = new Map<string, ProviderReconciliation>();
  for (const [provider, reporter] of Object.entries(REPORTERS)) {
    const prefix = provider.toUpperCase();
    const adminKey = env[`${prefix}_ADMIN_KEY`];
    const baseUrl = baseUrlOf(provider, env);
    if (!adminKey || !baseUrl) continue;
    const credentials = pools[provider]?.map((c) => c.name) ?? ['default'];
    const groupOf = new Map<string, string>();
    for (const pair of (env[reporter.groups] ?? '').split(',').filter((p) => p.trim() !== '')) {
      const [name, id] = pair.split('=').map((s) => s.trim());
      if (!name || !id || !credentials.includes(name))
        throw new Error(
          `invalid configuration: ${reporter.groups}: '${pair}' is not credential=id for one of ${credentials.join(', ')}`,
        );
      groupOf.set(name, id);
    }
    providers.set(provider, {
      provider,
      adminKey,
      baseUrl,
      report: reporter.report,
      groupKind: reporter.groupKind,
      credentials,
      groupOf,
    });
  }
  return { providers, thresholdPercent };
}

/** The provider's settings, or the refusal naming what is missing. */
export function reconciliationOf(settings: ReconcileSettings, provider: string): ProviderReconciliation {
  const found = settings.providers.get(provider);
  if (found) return found;
  if (!REPORTERS[provider])
    throw invalidField(
      'provider',
      `${provider} publishes no cost report the gateway reads (${Object.keys(REPORTERS).join(', ')})`,
    );
  throw invalidField('provider', `${provider} has no admin key: set ${provider.toUpperCase()}_ADMIN_KEY`);
}
