import type { DirectSession } from './direct.ts';

type Flags = Record<string, string | undefined>;

/** What the CLI does for a `keys` command: the admin API's path (a GET for `list`, else a POST with `body`), or the same on the store. */
export interface KeyCommand {
  path: string;
  body?: unknown;
  direct(session: DirectSession): Promise<unknown>;
}

/** `--expires-at`: Unix seconds or an ISO 8601 time, to Unix seconds; undefined when absent, a string when bad. */
function expiresAt(flags: Flags): number | undefined | { bad: string } {
  const raw = flags['expires-at'];
  if (raw === undefined) return undefined;
  const at = /^\d+$/.test(raw)
    ? Number(raw) * 1000
    : /^\d{4}-\d{2}-\d{2}/.test(raw)
      ? Date.parse(raw)
      : Number.NaN;
  if (!Number.isSafeInteger(at)) return { bad: '--expires-at must be Unix seconds or an ISO 8601 time' };
  return Math.floor(at / 1000);
}

/**
 * `keys list [--account ID] [--sub-account ID]`, `keys create --account ID [--name N] [--expires-at T]`,
 * `keys revoke --key-id ID`, `keys rotate --key-id ID [--grace-seconds N] [--expires-at T]`; a string is a usage
 * error to report.
 */
export function keyCommand(action: string | undefined, flags: Flags): KeyCommand | string {
  const id = (name: string) => encodeURIComponent(flags[name] ?? '');
  const expiry = expiresAt(flags);
  if (typeof expiry === 'object') return expiry.bad;
  switch (action) {
    case 'list': {
      const query = new URLSearchParams();
      if (flags.account) query.set('account', flags.account);
      if (flags['sub-account']) query.set('sub_account', flags['sub-account']);
      const search = query.toString();
      return {
        path: `/keys${search ? `?${search}` : ''}`,
        // Loaded when it runs: a command sent to a running gateway never needs the read models.
        direct: async (s) =>
          (await import('../accounts/operator-views.ts')).listKeys(
            s.database.pool,
            flags.account,
            flags['sub-account'],
          ),
      };
    }
    case 'create': {
      const account = flags.account;
      if (!account) return '--account is required';
      const body = { name: flags.name, expires_at: expiry };
      return {
        path: `/accounts/${id('account')}/keys`,
        body,
        direct: async (s) => {
          const issued = await s.keys.issue(
            { accountId: account, subAccountId: null },
            { name: flags.name, expiresAt: expiry },
          );
          return { account_id: account, key_id: issued.id, ...issued };
        },
      };
    }
    case 'revoke': {
      const keyId = flags['key-id'];
      if (!keyId) return '--key-id is required';
      return {
        path: `/keys/${id('key-id')}/revoke`,
        direct: (s) => s.keys.revokeById(keyId),
      };
    }
    case 'rotate': {
      const keyId = flags['key-id'];
      if (!keyId) return '--key-id is required';
      const grace = flags['grace-seconds'] === undefined ? 0 : Number(flags['grace-seconds']);
      if (!Number.isSafeInteger(grace) || grace < 0)
        return '--grace-seconds must be an integer of at least 0';
      return {
        path: `/keys/${id('key-id')}/rotate`,
        body: { grace_seconds: grace, expires_at: expiry },
        direct: async (s) => {
          const rotated = await s.keys.rotateById(keyId, { graceSeconds: grace, expiresAt: expiry });
          return { key_id: rotated.id, ...rotated };
        },
      };
    }
    default:
      return 'keys list | create | revoke | rotate';
  }
}
