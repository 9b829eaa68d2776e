import type { Config } from '../config.ts';
import { accountRestriction } from '../routing/patterns.ts';
import type { DirectSession } from './direct.ts';
import {
  cacheDefaultFlag,
  type Flags,
  onOffFlag,
  optionalInteger,
  requestBodiesFlag,
  required,
} from './flags.ts';
import { type KeyCommand, keyCommand } from './keys.ts';
import { UsageError } from './usage.ts';

// The account commands: their admin API call, checked here before anything runs, and the same on the store. What
// works on the store loads its modules when it runs, so a command sent to a running gateway stays cheap to start.

/** The operator's read models, for the commands that work on the store. */
const views = () => import('../accounts/operator-views.ts');

/** A `keys` command (src/cli/keys.ts), or its usage error. */
function keys(action: string | undefined, flags: Flags): KeyCommand {
  const command = keyCommand(action, flags);
  if (typeof command === 'string') throw new UsageError(command);
  return command;
}

export interface ViewAction {
  /** The admin API's GET path. */
  path: string;
  direct(session: DirectSession): Promise<unknown>;
}

/** The operator's reads: through the running gateway's admin API, or from the store's read models. */
export function viewCommand(group: string, action: string | undefined, flags: Flags): ViewAction | undefined {
  const key = `${group} ${action ?? ''}`.trim();
  const id = (name: string) => encodeURIComponent(required(flags, name));
  switch (key) {
    case 'accounts list':
      return { path: '/accounts', direct: async (s) => (await views()).listAccounts(s.database.pool) };
    case 'accounts show': {
      const account = required(flags, 'account');
      return {
        path: `/accounts/${id('account')}`,
        direct: async (s) => (await views()).showAccount(s.database.pool, account),
      };
    }
    case 'keys list':
      return keys('list', flags);
    case 'balance': {
      const account = required(flags, 'account');
      return {
        path: `/accounts/${id('account')}/balance`,
        direct: async (s) => (await views()).accountBalance(s.database.pool, account),
      };
    }
    case 'usage': {
      const account = required(flags, 'account');
      const month = flags.month;
      if (month !== undefined && !/^\d{4}-(0[1-9]|1[0-2])$/.test(month))
        throw new UsageError('--month must read YYYY-MM');
      return {
        path: `/accounts/${id('account')}/usage${month ? `?month=${month}` : ''}`,
        direct: async (s) => (await views()).accountUsage(s.database.pool, account, month),
      };
    }
    default:
      return undefined;
  }
}

export interface AccountAction {
  path: string;
  body?: unknown;
  direct(session: DirectSession): Promise<unknown>;
}

export async function accountCommand(
  group: string,
  action: string | undefined,
  flags: Flags,
  config: Config,
): Promise<AccountAction> {
  const key = `${group} ${action ?? ''}`.trim();
  switch (key) {
    case 'accounts create': {
      const name = required(flags, 'name');
      return { path: '/accounts', body: { name }, direct: (s) => s.accounts.createAccount(name) };
    }
    case 'accounts update': {
      const account = required(flags, 'account');
      const rpm = optionalInteger(flags, 'rate-limit-rpm', 1);
      const tpm = flags['rate-limit-tpm'] === 'none' ? null : optionalInteger(flags, 'rate-limit-tpm', 1);
      const low = optionalInteger(flags, 'balance-low-cents', 0);
      const bodies = requestBodiesFlag(flags);
      const days =
        flags['request-retention-days'] === 'default'
          ? null
          : optionalInteger(flags, 'request-retention-days', 1);
      const writeTools = onOffFlag(flags);
      const cacheDefault = cacheDefaultFlag(flags);
      const byokSubAccounts = onOffFlag(flags, 'byok-sub-accounts');
      const byokFallback = onOffFlag(flags, 'byok-fallback');
      const given = [rpm, tpm, low, bodies, days, writeTools, cacheDefault, byokSubAccounts, byokFallback];
      if (given.every((value) => value === undefined))
        throw new UsageError(
          'give --rate-limit-rpm, --rate-limit-tpm, --balance-low-cents, --request-bodies, --request-retention-days, --mcp-write-tools, --cache-default, --byok-sub-accounts or --byok-fallback',
        );
      const body = {
        rate_limit_rpm: rpm,
        rate_limit_tpm: tpm,
        balance_low_cents: low,
        request_bodies: bodies,
        request_retention_days: days,
        mcp_write_tools: writeTools,
        cache_default: cacheDefault,
        byok_sub_accounts: byokSubAccounts,
        byok_fallback: byokFallback,
      };
      return {
        path: `/accounts/${encodeURIComponent(account)}/settings`,
        body,
        direct: async (s) => {
          await s.accounts.changeSettings(account, {
            rateLimitRpm: rpm,
            rateLimitTpm: tpm,
            balanceLowCents: low,
            requestBodies: bodies,
            requestRetentionDays: days,
            mcpWriteTools: writeTools,
            cacheDefault,
            byokSubAccounts,
            byokFallback,
          });
          return { account_id: account, ...body };
        },
      };
    }
    case 'accounts routing': {
      const account = required(flags, 'account');
      const list = (name: string) =>
        flags[name] === undefined
          ? undefined
          : (flags[name] ?? '')
              .split(',')
              .map((p) => p.trim())
              .filter(Boolean);
      const allowed = list('allow') ?? null;
      const excluded = list('exclude') ?? [];
      const routing = accountRestriction(allowed, excluded);
      return {
        path: `/accounts/${encodeURIComponent(account)}/routing`,
        body: { allowed, excluded },
        direct: async (s) => {
          await s.accounts.changeSettings(account, { routing });
          return { account_id: account, routing: routing ?? { allowed: null, excluded: [] } };
        },
      };
    }
    case 'keys create':
    case 'keys rotate':
    case 'keys revoke':
      return keys(action, flags);
    case 'webhooks set':
    case 'webhooks clear': {
      const account = required(flags, 'account');
      const raw = action === 'set' ? required(flags, 'url') : null;
      return {
        path: `/accounts/${encodeURIComponent(account)}/webhook-endpoint`,
        body: { url: raw },
        direct: async (s) => {
          const url =
            raw === null
              ? null
              : await (await import('../webhooks/url.ts')).checkEndpointUrl(raw, config.env);
          await s.accounts.setWebhookEndpoint(account, url);
          return { account_id: account, url };
        },
      };
    }
    default:
      if (group === 'topup') {
        const account = required(flags, 'account');
        const reference = required(flags, 'reference');
        const cents = Number(required(flags, 'cents'));
        if (!Number.isSafeInteger(cents) || cents <= 0)
          throw new UsageError('--cents must be a positive integer');
        return {
          path: `/accounts/${encodeURIComponent(account)}/top-ups`,
          body: { cents, reference },
          direct: (s) => s.accounts.topUp(account, cents, reference),
        };
      }
      if (group === 'adjust') {
        const account = required(flags, 'account');
        const cents = Number(required(flags, 'cents'));
        if (!Number.isSafeInteger(cents) || cents === 0)
          throw new UsageError('--cents must be a non-zero integer (a debit: --cents=-N)');
        const body = {
          cents,
          reason: required(flags, 'reason'),
          reference: required(flags, 'reference'),
          ...(flags.reverses !== undefined && { reverses: flags.reverses }),
        };
        return {
          path: `/accounts/${encodeURIComponent(account)}/adjustments`,
          body,
          direct: (s) => s.accounts.adjust(account, body),
        };
      }
      throw new UsageError(`unknown command: ${key}`);
  }
}
