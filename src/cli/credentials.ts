import type { Remote } from './remote.ts';

/**
 * `credentials list|disable|enable`: the providers' key pools live in the running gateway's memory, so these go
 * through its admin API only (with several instances, each holds its own; run against each).
 */
export async function credentialsCommand(
  remote: Remote,
  action: string | undefined,
  flags: { provider?: string; name?: string },
  usage: (message: string) => Error,
): Promise<unknown> {
  if (action === 'list') {
    return flags.provider
      ? remote.get(`/providers/${encodeURIComponent(flags.provider)}/credentials`)
      : remote.get('/providers/credentials');
  }
  if (action !== 'disable' && action !== 'enable') throw usage('credentials list|disable|enable');
  if (!flags.provider || !flags.name) throw usage(`credentials ${action} needs --provider and --name`);
  const path = `/providers/${encodeURIComponent(flags.provider)}/credentials/${encodeURIComponent(flags.name)}`;
  return remote.post(path, { in_rotation: action === 'enable' });
}
