import type { Config } from '../config.ts';
import type { DirectSession } from './direct.ts';
import type { Remote } from './remote.ts';

/**
 * `reconcile --day YYYY-MM-DD [--provider P]`: through the running gateway's admin API when one answers, else on
 * the store with this process's own provider settings (the same environment or config file as the gateway's).
 */
export async function reconcileCommand(
  config: Config,
  flags: { day?: string; provider?: string },
  remote: Remote | undefined,
  open: () => Promise<DirectSession>,
  usage: (message: string) => Error,
): Promise<unknown> {
  if (!flags.day) throw usage('reconcile needs --day YYYY-MM-DD');
  const body = { day: flags.day, ...(flags.provider && { provider: flags.provider }) };
  if (remote) return remote.post('/reconciliation', body);
  // Loaded here, not with the file: the providers' cost-report clients are the heaviest of the CLI's modules, and
  // a command sent to a running gateway needs none of them.
  const [{ Reconciler }, { reconcileSettings }] = await Promise.all([
    import('../reconciliation/reconciler.ts'),
    import('../reconciliation/settings.ts'),
  ]);
  const settings = reconcileSettings(config.env, config.pools);
  const session = await open();
  try {
    const reconciler = new Reconciler(
      session.store,
      session.database.pool,
      settings,
      () => new Date(),
      config.operatorAccountId,
    );
    const providers = flags.provider ? [flags.provider] : reconciler.providers();
    const data = [];
    for (const provider of providers) {
      const { reconciliation, appended } = await reconciler.reconcile(provider, flags.day);
      data.push({ ...reconciliation, appended });
    }
    return { object: 'list', data };
  } finally {
    await session.close();
  }
}
