import { parseArgs } from 'node:util';
import { DomainError } from '../../commands/errors.ts';
import type { AccountAction } from './accounts.ts';
import type { AuditorGroup, StoreCommand } from './auditor.ts';
import type { DirectSession } from './direct.ts';
import type { Flags } from './flags.ts';
import { findRunningGateway, RemoteError } from './remote.ts';
import { describeStore, NoStoreError, requireExistingStore } from './store.ts';
import { HelpRequested, TextOutput, USAGE, UsageError } from './usage.ts';

// Each command loads its modules with `import()` when it runs: the gateway's whole module graph was most of every
// start, and usage, `--help` or a command sent to a running gateway need a small part of it. What this file
// imports itself stays light (no zod, pg or read models).

const say = (line: string) => process.stderr.write(`${line}\n`);

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
  const { loadConfig } = await import('../config.ts');
  const config = loadConfig();
  const init = values.init === true;
  // Working on the store: said first, and refused when the store does not exist unless --init asks for one.
  const open = async (announced = false) => {
    if (!init) await requireExistingStore(config, config.gatewayUrl);
    if (!announced) say(`store at ${describeStore(config)}${init ? ' (--init: created when missing)' : ''}`);
    const { openDirect } = await import('./direct.ts');
    return openDirect(config);
  };

  if (group === 'projections') {
    const { runProjections } = await import('./auditor.ts');
    return runProjections(action, argument, () => open());
  }
  if (alwaysOnStore(group, action, flags)) {
    const { auditorCommand } = await import('./auditor.ts');
    return onStore(auditorCommand(group, action, argument, flags, config), () => open());
  }
  if (group === 'reconcile') {
    const remote = await findRunningGateway(config);
    if (remote) say(`gateway at ${config.gatewayUrl}`);
    const { reconcileCommand } = await import('./reconcile.ts');
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
    const { reencryptProviderKeys } = await import('./provider-keys.ts');
    return onStore(
      (s) => reencryptProviderKeys(s.database.pool, config.env),
      () => open(),
    );
  }
  if (group === 'credentials') {
    const remote = await findRunningGateway(config);
    if (!remote) throw new UsageError(`credentials needs a running gateway at ${config.gatewayUrl}`);
    const { credentialsCommand } = await import('./credentials.ts');
    return credentialsCommand(remote, action, flags, process.env, (message) => new UsageError(message));
  }
  const { accountCommand, viewCommand } = await import('./accounts.ts');
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

/** The auditor's tools and `webhooks show` (src/cli/auditor.ts) work on the store, beside a running gateway too. */
function alwaysOnStore(group: string, action: string | undefined, flags: Flags): group is AuditorGroup {
  return (
    group === 'audit' ||
    group === 'export' ||
    group === 'requests' ||
    (group === 'balance' && flags.at !== undefined) ||
    (group === 'webhooks' && action === 'show')
  );
}

async function onStore(command: StoreCommand, open: () => Promise<DirectSession>): Promise<unknown> {
  const session = await open();
  try {
    return await command(session);
  } finally {
    await session.close();
  }
}

/** A failed command's JSON error, for stderr. */
async function failure(error: unknown): Promise<unknown> {
  if (error instanceof RemoteError) return error.body;
  if (error instanceof NoStoreError) return { error: { message: error.message, type: 'no_store', code: 1 } };
  // config.ts is loaded by now unless the arguments did not parse. A bad setting is the operator's to fix, so its
  // words are what they need: the HTTP error mapping would hide them behind a 500 (it is for refusals alone).
  const { ConfigError } = await import('../config.ts');
  if (error instanceof ConfigError)
    return { error: { message: error.message, type: 'config_error', code: 1 } };
  if (error instanceof DomainError) return (await import('../http/errors.ts')).describeError(error).body;
  return {
    error: { message: error instanceof Error ? error.message : String(error), type: 'cli_error', code: 1 },
  };
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
  async (error: unknown) => {
    if (error instanceof HelpRequested) {
      process.stdout.write(`${USAGE}\n`, () => process.exit(0));
      return;
    }
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message ? `${error.message}\n\n` : ''}${USAGE}\n`);
      process.exit(2);
    }
    process.stderr.write(`${JSON.stringify(await failure(error))}\n`);
    process.exit(1);
  },
);
