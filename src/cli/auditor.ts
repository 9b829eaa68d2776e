import { DomainError } from '../../commands/errors.ts';
import type { Config } from '../config.ts';
import type { DirectSession } from './direct.ts';
import { type Flags, monthFlag, required } from './flags.ts';
import { TextOutput, UsageError } from './usage.ts';

// The commands that always work on the store: the auditor's tools and the read models' upkeep. Their flags are
// checked before the store opens; each loads its own modules when it runs, so no command pays for another's.

/** Exit code of an audit that found a mismatch (1 is a command that failed, 2 bad usage). */
const AUDIT_MISMATCH = 3;

export type StoreCommand = (session: DirectSession) => Promise<unknown>;

export type AuditorGroup = 'audit' | 'balance' | 'export' | 'requests' | 'webhooks';

/**
 * `audit`, `balance --at`, `export`, `requests`, `webhooks show`: the auditor's tools read the log and the read
 * models directly, never through a running gateway's API.
 */
export function auditorCommand(
  group: AuditorGroup,
  action: string | undefined,
  argument: string | undefined,
  flags: Flags,
  config: Config,
): StoreCommand {
  switch (group) {
    case 'audit':
      return async (s) => {
        const { runAudit } = await import('../audit/audit.ts');
        const outcome = await runAudit(s.database.pool, s.store, { accountId: flags.account });
        return new TextOutput(outcome.report, outcome.ok ? 0 : AUDIT_MISMATCH);
      };
    case 'balance': {
      const account = required(flags, 'account');
      const raw = required(flags, 'at');
      const at = new Date(raw);
      if (!/^\d{4}-\d{2}-\d{2}/.test(raw) || Number.isNaN(at.getTime()))
        throw new UsageError('--at must be an ISO 8601 time, such as 2026-01-31T12:00:00Z');
      return async (s) => (await import('../audit/balance-at.ts')).balanceAt(s.store, account, at);
    }
    case 'export': {
      const account = required(flags, 'account');
      const month = monthFlag(flags);
      const format = flags.format ?? 'csv';
      if (format !== 'csv') throw new UsageError(`--format ${format} is not supported; only csv`);
      return async (s) => {
        const { exportChargesCsv } = await import('../audit/export-charges.ts');
        return new TextOutput(await exportChargesCsv(s.database.pool, account, month));
      };
    }
    case 'requests':
      return requestsCommand(action, argument, flags, config);
    case 'webhooks': {
      const account = required(flags, 'account');
      return async (s) => (await import('./webhooks.ts')).showWebhooks(s.database.pool, account);
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
): StoreCommand {
  if (action === 'show') {
    if (!id) throw new UsageError('requests show ID');
    return async (s) => {
      const [{ showRequest }, { openBlobStore }] = await Promise.all([
        import('./requests.ts'),
        import('../files/open-blob-store.ts'),
      ]);
      const found = await showRequest(s.database.pool, openBlobStore(config), id, flags.account);
      if (!found) throw new DomainError('not_found', `No request ${id}`);
      return found;
    };
  }
  if (action === 'export') {
    const month = monthFlag(flags);
    return async (s) =>
      new TextOutput(
        await (await import('./requests.ts')).exportRequests(s.database.pool, month, flags.account),
      );
  }
  throw new UsageError('requests show ID | requests export --month YYYY-MM');
}

/** `projections status | rebuild [NAME]`. */
export async function runProjections(
  action: string | undefined,
  name: string | undefined,
  open: () => Promise<DirectSession>,
): Promise<unknown> {
  if (action !== 'status' && action !== 'rebuild')
    throw new UsageError('projections status | rebuild [NAME]');
  const [{ projectionNamed, projections }, { projectionStatus }, { rebuildProjection }] = await Promise.all([
    import('../../projections/index.ts'),
    import('../projections/status.ts'),
    import('../projections/rebuild.ts'),
  ]);
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
