import type { Remote } from './remote.ts';

type Flags = Record<string, string | undefined>;

const LIMITS = ['rpm', 'tpm', 'monthly-spend-cents'] as const;

/**
 * `credentials list|add|set|remove|disable|enable`: the providers' key pools live in the running gateway's memory, so
 * these go through its admin API only. `add`, `set` and `remove` are recorded and every instance follows them;
 * `disable` and `enable` act on the instance reached (with several, run them against each).
 */
export async function credentialsCommand(
  remote: Remote,
  action: string | undefined,
  flags: Flags,
  env: NodeJS.ProcessEnv,
  usage: (message: string) => Error,
): Promise<unknown> {
  if (action === 'list') {
    return flags.provider
      ? remote.get(`/providers/${encodeURIComponent(flags.provider)}/credentials`)
      : remote.get('/providers/credentials');
  }
  const actions = ['add', 'set', 'remove', 'disable', 'enable'];
  if (!action || !actions.includes(action)) throw usage(`credentials list|${actions.join('|')}`);
  if (!flags.provider || !flags.name) throw usage(`credentials ${action} needs --provider and --name`);
  const pool = `/providers/${encodeURIComponent(flags.provider)}/credentials`;
  const one = `${pool}/${encodeURIComponent(flags.name)}`;
  switch (action) {
    case 'add':
      return remote.post(pool, {
        name: flags.name,
        key: secretOf(flags, env, usage),
        ...settingsOf(flags, usage, false),
      });
    case 'set': {
      const change = settingsOf(flags, usage, true);
      if (Object.keys(change).length === 0)
        throw usage('credentials set needs --weight, --rpm, --tpm or --monthly-spend-cents');
      return remote.patch(one, change);
    }
    case 'remove':
      return remote.delete(one);
    default:
      return remote.post(one, { in_rotation: action === 'enable' });
  }
}

/** `--key K`, or `--key-env VAR` (the secret kept out of the command line and the shell's history). */
function secretOf(flags: Flags, env: NodeJS.ProcessEnv, usage: (message: string) => Error): string {
  if ((flags.key === undefined) === (flags['key-env'] === undefined))
    throw usage('credentials add needs exactly one of --key and --key-env');
  if (flags.key !== undefined) return flags.key;
  const variable = flags['key-env'] as string;
  const value = env[variable];
  if (!value) throw usage(`--key-env: ${variable} is not set`);
  return value;
}

/** `--weight W`, and each limit as N (`none` removes it, for `set`); the gateway checks the ranges. */
function settingsOf(
  flags: Flags,
  usage: (message: string) => Error,
  change: boolean,
): Record<string, number | null> {
  const settings: Record<string, number | null> = {};
  for (const flag of ['weight', ...LIMITS]) {
    const raw = flags[flag];
    if (raw === undefined) continue;
    const field = flag.replaceAll('-', '_');
    if (change && raw === 'none' && flag !== 'weight') settings[field] = null;
    else if (/^-?\d+$/.test(raw)) settings[field] = Number(raw);
    else throw usage(`--${flag} must be an integer${change && flag !== 'weight' ? ' or none' : ''}`);
  }
  return settings;
}
