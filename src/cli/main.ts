import { parseArgs } from 'node:util';
import { DomainError } from '../../commands/errors.ts';
import { projectionNamed, projections } from '../../projections/index.ts';
import { accountBalance, accountUsage, listAccounts, showAccount } from '../accounts/operator-views.ts';
import { runAudit } from '../audit/audit.ts';
import { balanceAt } from '../audit/balance-at.ts';
import { exportChargesCsv } from '../audit/export-charges.ts';
import { CACHE_MODES, type CacheMode } from '../cache/mode.ts';
import { type Config, ConfigError, loadConfig } from '../config.ts';
import { openBlobStore } from '../files/open-blob-store.ts';
import { describeError } from '../http/errors.ts';
import { rebuildProjection } from '../projections/rebuild.ts';
import { projectionStatus } from '../projections/status.ts';
import { accountRestriction } from '../routing/patterns.ts';
import { checkEndpointUrl } from '../webhooks/url.ts';
import { credentialsCommand } from './credentials.ts';
import { type DirectSession, openDirect } from './direct.ts';
import { type KeyCommand, keyCommand } from './keys.ts';
import { reencryptProviderKeys } from './provider-keys.ts';
import { reconcileCommand } from './reconcile.ts';
import { findRunningGateway, RemoteError } from './remote.ts';
import { exportRequests, showRequest } from './requests.ts';
import { describeStore, NoStoreError, requireExistingStore } from './store.ts';
import { showWebhooks } from './webhooks.ts';

const USAGE = `Usage: npm run -s gateway -- <command> [--init]     (or: npx model-gateway <command>)

  accounts list                                      every account: name, balance, active keys, sub-accounts
  accounts show --account ID                         one account: settings, keys, balance (top-ups, charges)
  accounts create --name NAME                        open an account; prints {"account_id", "key", "key_id"}
  accounts update --account ID [--rate-limit-rpm N] [--rate-limit-tpm N|none] [--balance-low-cents N]
                  [--request-bodies keep|drop|default] [--request-retention-days N|default]
                  [--mcp-write-tools on|off] [--cache-default auto|force|semantic|skip]
                  [--byok-sub-accounts on|off] [--byok-fallback on|off]
                                                     the account's requests and tokens per minute (the tokens cap
                                                     its sub-accounts' own; none lifts it), where balance.low fires,
                                                     whether (and how long) its request bodies are kept, whether
                                                     its keys get the MCP server's write tools (docs/mcp.md), and
                                                     the cache mode of its requests that name none (docs/cache.md),
                                                     whether its sub-accounts may bring provider keys and a failing
                                                     own key falls back to the operator's pool (docs/providers.md)
  accounts routing --account ID [--allow P,P] [--exclude P,P]
                                                     the models the automatic router may choose for the account
                                                     (\`*\` wildcards); neither flag lifts the restriction
  keys list [--account ID] [--sub-account ID]       keys (name, prefix, created, expires, revoked), newest first;
                                                     an account's include its sub-accounts' keys
  keys create --account ID [--name NAME] [--expires-at T]
                                                     issue another main key (T: Unix seconds or ISO 8601 time)
  keys revoke --key-id ID                            revoke a key (a sub-account's too) at once, on every instance
  keys rotate --key-id ID [--grace-seconds N] [--expires-at T]
                                                     a new key in its place; the old one works N more seconds
  topup --account ID --cents N --reference REF       record a payment; the same REF credits once
  adjust --account ID --cents N --reason TEXT --reference REF [--reverses TOPUP_REF]
                                                     credit (N > 0) or debit (--cents=-N) the balance with a
                                                     reason; the same REF adjusts once; --reverses names the
                                                     top-up a debit gives back (docs/billing.md)
  webhooks set --account ID --url URL                where the account's lifecycle webhooks go (see docs/webhooks.md)
  webhooks clear --account ID                        stop the account's lifecycle webhooks
  webhooks show --account ID                         the endpoint and the latest deliveries, from the store
  credentials list [--provider P]                    each provider credential's weight and state (running gateway)
  credentials add --provider P --name N (--key-env VAR | --key K) [--weight W] [--rpm N] [--tpm N]
                  [--monthly-spend-cents N]          add a credential to the provider's pool, on every instance
                                                     and kept across restarts (needs GATEWAY_SECRETS_KEY)
  credentials set --provider P --name N [--weight W] [--rpm N|none] [--tpm N|none] [--monthly-spend-cents N|none]
                                                     change an added credential's weight or limits (none lifts one)
  credentials remove --provider P --name N           remove an added credential (the config file's: edit the file)
  credentials disable|enable --provider P --name N   take a credential out of rotation, or put it back (the
                                                     instance reached only)
  provider-keys reencrypt                            seal every provider key accounts brought, and every credential
                                                     added through the API, under the current GATEWAY_SECRETS_KEY
                                                     (after a rotation; docs/operations.md)
  reconcile --day YYYY-MM-DD [--provider P]          the providers' cost reports for that UTC day against the
                                                     ledger's pass-through, per credential and model; a rerun
                                                     with the same figures appends nothing (docs/billing.md)
  projections status                                 each read model's checkpoint and lag
  projections rebuild [NAME]                         replay the log into fresh tables and swap them in
  audit [--account ID]                               verify the log alone: revisions, ids, schemas, hash chains, read
                                                     models, holds, caps, balances; a report, exit 3 on a mismatch
  balance --account ID                               the balance now: cents, usd, topped up, charged
  balance --account ID --at ISO_TIME                 the balance as it stood at that instant, from the log
  usage --account ID [--month YYYY-MM]               the month's requests, cost and units: total, per sub-account,
                                                     per tag (this month by default)
  export --account ID --month YYYY-MM [--format csv] the month's charges for finance, one CSV line each
  requests show ID [--account ID]                    one logged request (by X-Request-Id), with its bodies when kept
  requests export --month YYYY-MM [--account ID]     the month's request log as JSON lines, oldest first

Talks to the gateway at GATEWAY_URL (default http://127.0.0.1:$PORT) with GATEWAY_ADMIN_TOKEN (or the token in
GATEWAY_DATA_DIR); when no gateway answers, works on the store directly (GATEWAY_DATA_DIR's embedded PostgreSQL,
or DATABASE_URL and GATEWAY_DB_SCHEMA). projections, audit, balance --at, export, requests and webhooks show always
work on the store directly, beside a running gateway too. Where it works is said on stderr ("gateway at …",
"store at …"); stdout carries the result alone (JSON, or the report or CSV named above).

A store that does not exist is an error (exit 1): the CLI creates one only with --init.
Exit codes: 0 done, 1 refused or failed (a JSON error on stderr), 2 bad usage, 3 an audit mismatch.`;

/** Exit code of an audit that found a mismatch (1 is a command that failed, 2 bad usage). */
const AUDIT_MISMATCH = 3;

class UsageError extends Error {}

/** `--help`: the usage on stdout, exit 0. */
class HelpRequested extends Error {}

const say = (line: string) => process.stderr.write(`${line}\n`);

/** A result printed as it is rather than as JSON (a report, a CSV file), with the exit code it calls for. */
class TextOutput {
  constructor(
    readonly text: string,
    readonly exitCode = 0,
  ) {}
}

type Flags = Record<string, string | undefined>;

function required(flags: Flags, name: string): string {
  const value = flags[name];
  if (!value) throw new UsageError(`--${name} is required`);
  return value;
}

/** `--request-bodies keep|drop|default` (default: back to the gateway's setting). */
function requestBodiesFlag(flags: Flags): 'keep' | 'drop' | null | undefined {
  const raw = flags['request-bodies'];
  if (raw === undefined) return undefined;
  if (raw === 'default') return null;
  if (raw !== 'keep' && raw !== 'drop')
    throw new UsageError('--request-bodies must be keep, drop or default');
  return raw;
}

/** `--cache-default auto|force|semantic|skip`. */
function cacheDefaultFlag(flags: Flags): CacheMode | undefined {
  const raw = flags['cache-default'];
  if (raw === undefined) return undefined;
  if (!(CACHE_MODES as readonly string[]).includes(raw))
    throw new UsageError(`--cache-default must be ${CACHE_MODES.join(', ')}`);
  return raw as CacheMode;
}

/** `--mcp-write-tools on|off`, `--byok-sub-accounts on|off`, `--byok-fallback on|off`. */
function onOffFlag(flags: Flags, name = 'mcp-write-tools'): boolean | undefined {
  const raw = flags[name];
  if (raw === undefined) return undefined;
  if (raw !== 'on' && raw !== 'off') throw new UsageError(`--${name} must be on or off`);
  return raw === 'on';
}

function optionalInteger(flags: Flags, name: string, min: number): number | undefined {
  const raw = flags[name];
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min)
    throw new UsageError(`--${name} must be an integer of at least ${min}`);
  return value;
}

async function run(argv: string[]): Promise<unknown> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      provider: { type: 'string' },
      account: { type: 'string' },
      'key-id': { type: 'string' },
      'sub-account': { type: 'string' },
      'expires-at': { type: 'string' },
      'grace-seconds': { type: 'string' },
      cents: { type: 'string' },
      reference: { type: 'string' },
      reason: { type: 'string' },
      reverses: { type: 'string' },
      'rate-limit-rpm': { type: 'string' },
      'rate-limit-tpm': { type: 'string' },
      'balance-low-cents': { type: 'string' },
      at: { type: 'string' },
      month: { type: 'string' },
      format: { type: 'string' },
      'request-bodies': { type: 'string' },
      'request-retention-days': { type: 'string' },
      allow: { type: 'string' },
      exclude: { type: 'string' },
      'mcp-write-tools': { type: 'string' },
      'byok-sub-accounts': { type: 'string' },
      'byok-fallback': { type: 'string' },
      'cache-default': { type: 'string' },
      url: { type: 'string' },
      day: { type: 'string' },
      key: { type: 'string' },
      'key-env': { type: 'string' },
      weight: { type: 'string' },
      rpm: { type: 'string' },
      tpm: { type: 'string' },
      'monthly-spend-cents': { type: 'string' },
      init: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const flags = values as Flags;
  const [group, action, argument] = positionals;
  if (values.help || group === 'help') throw new HelpRequested();
  if (!group) throw new UsageError('');
  const config = loadConfig();
  const init = values.init === true;
  // Working on the store: said first, and refused when the store does not exist unless --init asks for one.
  const open = async (announced = false) => {
    if (!init) await requireExistingStore(config, config.gatewayUrl);
    if (!announced) say(`store at ${describeStore(config)}${init ? ' (--init: created when missing)' : ''}`);
    return openDirect(config);
  };

  if (group === 'projections') return runProjections(action, argument, () => open());
  if (group === 'webhooks' && action === 'show') {
    const account = required(flags, 'account');
    return runAuditor(
      (s) => showWebhooks(s.database.pool, account),
      () => open(),
    );
  }
  if (group === 'requests') return runAuditor(requestsCommand(action, argument, flags, config), () => open());
  if (group === 'audit' || group === 'export' || (group === 'balance' && flags.at !== undefined))
    return runAuditor(auditorCommand(group, flags), () => open());

  if (group === 'reconcile') {
    const remote = await findRunningGateway(config);
    if (remote) say(`gateway at ${config.gatewayUrl}`);
    return reconcileCommand(
      config,
      flags,
      remote,
      () => open(),
      (message) => new UsageError(message),
    );
  }
  if (group === 'provider-keys') {
    if (action !== 'reencrypt') throw new UsageError('provider-keys reencrypt');
    return runAuditor(
      (s) => reencryptProviderKeys(s.database.pool, config.env),
      () => open(),
    );
  }
  if (group === 'credentials') {
    const remote = await findRunningGateway(config);
    if (!remote) throw new UsageError(`credentials needs a running gateway at ${config.gatewayUrl}`);
    return credentialsCommand(remote, action, flags, process.env, (message) => new UsageError(message));
  }
  const view = viewCommand(group, action, flags);
  const accountAction = view ? undefined : await accountCommand(group, action, flags, config);
  const remote = await findRunningGateway(config);
  if (remote) {
    say(`gateway at ${config.gatewayUrl}`);
    if (view) return remote.get(view.path);
    return remote.post((accountAction as AccountAction).path, (accountAction as AccountAction).body);
  }
  say(
    `no gateway answered at ${config.gatewayUrl}; store at ${describeStore(config)}${init ? ' (--init: created when missing)' : ''}`,
  );
  const session = await open(true);
  try {
    return await (view ?? (accountAction as AccountAction)).direct(session);
  } finally {
    await session.close();
  }
}

/** A `keys` command (src/cli/keys.ts), or its usage error. */
function keys(action: string | undefined, flags: Flags): KeyCommand {
  const command = keyCommand(action, flags);
  if (typeof command === 'string') throw new UsageError(command);
  return command;
}

interface ViewAction {
  /** The admin API's GET path. */
  path: string;
  direct(session: DirectSession): Promise<unknown>;
}

/** The operator's reads: through the running gateway's admin API, or from the store's read models. */
function viewCommand(group: string, action: string | undefined, flags: Flags): ViewAction | undefined {
  const key = `${group} ${action ?? ''}`.trim();
  const id = (name: string) => encodeURIComponent(required(flags, name));
  switch (key) {
    case 'accounts list':
      return { path: '/accounts', direct: (s) => listAccounts(s.database.pool) };
    case 'accounts show': {
      const account = required(flags, 'account');
      return { path: `/accounts/${id('account')}`, direct: (s) => showAccount(s.database.pool, account) };
    }
    case 'keys list':
      return keys('list', flags);
    case 'balance': {
      const account = required(flags, 'account');
      return {
        path: `/accounts/${id('account')}/balance`,
        direct: (s) => accountBalance(s.database.pool, account),
      };
    }
    case 'usage': {
      const account = required(flags, 'account');
      const month = flags.month;
      if (month !== undefined && !/^\d{4}-(0[1-9]|1[0-2])$/.test(month))
        throw new UsageError('--month must read YYYY-MM');
      return {
        path: `/accounts/${id('account')}/usage${month ? `?month=${month}` : ''}`,
        direct: (s) => accountUsage(s.database.pool, account, month),
      };
    }
    default:
      return undefined;
  }
}

interface AccountAction {
  path: string;
  body?: unknown;
  direct(session: DirectSession): Promise<unknown>;
}

async function accountCommand(
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
          const url = raw === null ? null : await checkEndpointUrl(raw, config.env);
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

async function runProjections(
  action: string | undefined,
  name: string | undefined,
  open: () => Promise<DirectSession>,
): Promise<unknown> {
  if (action !== 'status' && action !== 'rebuild')
    throw new UsageError('projections status | rebuild [NAME]');
  const selected = name ? [projectionNamed(name)] : projections;
  if (selected.some((p) => p === undefined)) {
    throw new UsageError(`unknown projection ${name}; known: ${projections.map((p) => p.name).join(', ')}`);
  }
  const session = await open();
  try {
    if (action === 'status') return await projectionStatus(session.database.pool, session.store, projections);
    const results = [];
    for (const projection of selected) {
      if (projection) results.push(await rebuildProjection(session.database.pool, session.store, projection));
    }
    return results;
  } finally {
    await session.close();
  }
}

type AuditorCommand = (session: DirectSession) => Promise<unknown>;

/** The auditor's tools read the log and the read models directly, never through a running gateway's API. */
function auditorCommand(group: 'audit' | 'balance' | 'export', flags: Flags): AuditorCommand {
  switch (group) {
    case 'audit':
      return async (s) => {
        const outcome = await runAudit(s.database.pool, s.store, { accountId: flags.account });
        return new TextOutput(outcome.report, outcome.ok ? 0 : AUDIT_MISMATCH);
      };
    case 'balance': {
      const account = required(flags, 'account');
      const raw = required(flags, 'at');
      const at = new Date(raw);
      if (!/^\d{4}-\d{2}-\d{2}/.test(raw) || Number.isNaN(at.getTime()))
        throw new UsageError('--at must be an ISO 8601 time, such as 2026-01-31T12:00:00Z');
      return (s) => balanceAt(s.store, account, at);
    }
    case 'export': {
      const account = required(flags, 'account');
      const month = required(flags, 'month');
      if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(month)) throw new UsageError('--month must read YYYY-MM');
      const format = flags.format ?? 'csv';
      if (format !== 'csv') throw new UsageError(`--format ${format} is not supported; only csv`);
      return async (s) => new TextOutput(await exportChargesCsv(s.database.pool, account, month));
    }
    default: {
      const _exhaustive: never = group;
      return _exhaustive;
    }
  }
}

function requestsCommand(
  action: string | undefined,
  id: string | undefined,
  flags: Flags,
  config: Config,
): AuditorCommand {
  if (action === 'show') {
    if (!id) throw new UsageError('requests show ID');
    return async (s) => {
      const found = await showRequest(s.database.pool, openBlobStore(config), id, flags.account);
      if (!found) throw new DomainError('not_found', `No request ${id}`);
      return found;
    };
  }
  if (action === 'export') {
    const month = required(flags, 'month');
    if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(month)) throw new UsageError('--month must read YYYY-MM');
    return async (s) => new TextOutput(await exportRequests(s.database.pool, month, flags.account));
  }
  throw new UsageError('requests show ID | requests export --month YYYY-MM');
}

async function runAuditor(command: AuditorCommand, open: () => Promise<DirectSession>): Promise<unknown> {
  const session = await open();
  try {
    return await command(session);
  } finally {
    await session.close();
  }
}

run(process.argv.slice(2)).then(
  (result) => {
    if (result instanceof TextOutput) {
      // A long export must reach the pipe before the process ends.
      process.stdout.write(result.text, () => process.exit(result.exitCode));
      return;
    }
    // A long list must reach the pipe before the process ends.
    process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
  },
  (error: unknown) => {
    if (error instanceof HelpRequested) {
      process.stdout.write(`${USAGE}\n`, () => process.exit(0));
      return;
    }
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message ? `${error.message}\n\n` : ''}${USAGE}\n`);
      process.exit(2);
    }
    const body =
      error instanceof RemoteError
        ? error.body
        : error instanceof DomainError || error instanceof ConfigError
          ? describeError(error).body
          : error instanceof NoStoreError
            ? { error: { message: error.message, type: 'no_store', code: 1 } }
            : {
                error: {
                  message: error instanceof Error ? error.message : String(error),
                  type: 'cli_error',
                  code: 1,
                },
              };
    process.stderr.write(`${JSON.stringify(body)}\n`);
    process.exit(1);
  },
);
