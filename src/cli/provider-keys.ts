import type pg from 'pg';
import { OperatorCredentialStore } from '../accounts/operator-credential-store.ts';
import { ProviderKeyStore } from '../accounts/provider-key-store.ts';
import { secretBoxOf } from '../accounts/secret-box.ts';

/**
 * `provider-keys reencrypt`: on the store directly, since the secrets are in its tables and a running gateway holds
 * them opened in memory (re-sealing changes nothing it uses). Needs the current key and the previous one(s). Seals
 * both the keys accounts brought and the credentials the operator added through the admin API; the totals are both
 * tables', and each table's own figures follow.
 */
export async function reencryptProviderKeys(pool: pg.Pool, env: NodeJS.ProcessEnv) {
  const box = secretBoxOf(env.GATEWAY_SECRETS_KEY, env.GATEWAY_SECRETS_KEY_PREVIOUS);
  if (!box)
    throw new Error('provider-keys reencrypt needs GATEWAY_SECRETS_KEY (and GATEWAY_SECRETS_KEY_PREVIOUS)');
  const keys = await new ProviderKeyStore(pool, box).reencrypt();
  const credentials = await new OperatorCredentialStore(pool, box).reencrypt();
  return {
    reencrypted: keys.reencrypted + credentials.reencrypted,
    unreadable: keys.unreadable + credentials.unreadable,
    total: keys.total + credentials.total,
    provider_keys: keys,
    provider_credentials: credentials,
  };
}
