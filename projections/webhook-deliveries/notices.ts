import type { StoredEvent } from '../../events/envelope.ts';
import type { GatewayEvent } from '../../events/index.ts';
import type { WebhookEventTypeName } from '../../events/webhook.ts';

/** A lifecycle event of an account, as its webhook will carry it. */
export interface Notice {
  accountId: string;
  type: WebhookEventTypeName;
  /** The WebhookEvent's `data`: snake_case, money in cents as numbers (exact to the nano-dollar). */
  data: Record<string, unknown>;
}

const cents = (nanos: string) => Number(BigInt(nanos)) / 1e7;

/** One delivery per source: the log event the notice comes from. */
export const noticeSource = (stored: Pick<StoredEvent, 'id'>) => `event:${stored.id}`;

/** The events that become account-level webhooks, mapped to their `type` and `data`; undefined for others. */
export function noticeOf(event: GatewayEvent): Notice | undefined {
  switch (event.type) {
    case 'BalanceLowReached': {
      const d = event.data;
      return {
        accountId: d.accountId,
        type: 'balance.low',
        data: {
          account_id: d.accountId,
          month: d.month,
          balance_cents: cents(d.balanceNanos),
          threshold_cents: cents(d.thresholdNanos),
        },
      };
    }
    case 'BalanceExhausted':
      return {
        accountId: event.data.accountId,
        type: 'balance.exhausted',
        data: {
          account_id: event.data.accountId,
          month: event.data.month,
          balance_cents: cents(event.data.balanceNanos),
        },
      };
    case 'TagUsageThresholdExceeded': {
      const d = event.data;
      return {
        accountId: d.accountId,
        type: 'usage.threshold.exceeded',
        data: {
          account_id: d.accountId,
          month: d.month,
          tag: d.tag,
          cap_cents: cents(d.capNanos),
          spent_cents: cents(d.spentNanos),
          threshold_percent: d.thresholdPercent,
        },
      };
    }
    case 'SubAccountSpendExceeded': {
      const d = event.data;
      return {
        accountId: d.accountId,
        type: 'subaccount.spend.exceeded',
        data: {
          account_id: d.accountId,
          sub_account_id: d.subAccountId,
          spend_cap_cents: cents(d.capNanos),
          spent_cents: cents(d.spentNanos),
          // A renewing cap's period (docs/billing.md, Reselling); absent for a cap for life.
          ...(d.periodStart !== undefined && { period_start: d.periodStart }),
        },
      };
    }
    case 'SubAccountCreated': {
      const d = event.data;
      return {
        accountId: d.accountId,
        type: 'subaccount.created',
        data: {
          account_id: d.accountId,
          sub_account_id: d.subAccountId,
          name: d.name,
          external_ref: d.externalRef,
          spend_cap_cents: cents(d.spendCapNanos),
          rate_limit_rpm: d.rateLimitRpm,
          default_tag: d.defaultTag,
        },
      };
    }
    case 'DailyUsageSummarized': {
      const d = event.data;
      return {
        accountId: d.accountId,
        type: 'usage.daily.summary',
        data: {
          account_id: d.accountId,
          day: d.day,
          requests: d.requests,
          cost_cents: cents(d.costNanos),
          units: d.units,
        },
      };
    }
    case 'WebhookSecretRotated':
      return {
        accountId: event.data.accountId,
        type: 'key.rotated',
        data: {
          account_id: event.data.accountId,
          key_id: event.data.keyId,
          sub_account_id: event.data.subAccountId,
        },
      };
    case 'EvalCompleted': {
      const d = event.data;
      return {
        accountId: d.accountId,
        type: 'eval.completed',
        data: {
          account_id: d.accountId,
          eval_id: d.evalId,
          name: d.name,
          metric: d.metric,
          run: d.run,
          winner_model: d.winnerModel,
          tie: d.tie,
          tied_models: d.tiedModels,
          reason: d.reason,
          cost_cents: cents(d.costNanos),
          results: d.candidates.map((c) => ({
            model: c.model,
            n: c.n,
            errors: c.errors,
            mean_score: c.meanScore,
            cost_cents: cents(c.costNanos),
            latency_p50_ms: c.latencyP50Ms,
          })),
        },
      };
    }
    case 'EvalFailed': {
      const d = event.data;
      return {
        accountId: d.accountId,
        type: 'eval.failed',
        data: {
          account_id: d.accountId,
          eval_id: d.evalId,
          name: d.name,
          run: d.run,
          error: d.error,
          cost_cents: cents(d.costNanos),
        },
      };
    }
    case 'ProviderCredentialRefused': {
      // The operator's own notice: to the operator's account, when one was configured, and to no other.
      const d = event.data;
      if (d.operatorAccountId === null) return undefined;
      return {
        accountId: d.operatorAccountId,
        type: 'provider.credential.out',
        data: {
          provider: d.provider,
          credential: d.credential,
          reason: d.reason,
          status: d.status,
          message: d.message,
          at: d.at,
        },
      };
    }
    case 'ProviderReconciled': {
      // The operator's own notice, like a credential's: only a flagged reconciliation, only to the operator.
      const d = event.data;
      if (!d.flagged || d.operatorAccountId === null) return undefined;
      return {
        accountId: d.operatorAccountId,
        type: 'reconciliation.variance',
        data: {
          provider: d.provider,
          day: d.day,
          run: d.run,
          threshold_percent: d.thresholdPercent,
          ledger_cents: cents(d.ledgerNanos),
          provider_cents: cents(d.providerNanos),
          rows: d.rows
            .filter((r) => r.flagged)
            .map((r) => ({
              credential: r.credential,
              model: r.model,
              ledger_cents: cents(r.ledgerNanos),
              provider_cents: cents(r.providerNanos),
              variance_cents: cents(r.varianceNanos),
              variance_percent: r.variancePercent,
            })),
        },
      };
    }
    default:
      return undefined;
  }
}

export const NOTICE_TYPES = [
  'BalanceLowReached',
  'BalanceExhausted',
  'TagUsageThresholdExceeded',
  'SubAccountSpendExceeded',
  'SubAccountCreated',
  'DailyUsageSummarized',
  'WebhookSecretRotated',
  'EvalCompleted',
  'EvalFailed',
  'ProviderCredentialRefused',
  'ProviderReconciled',
] as const;
