import type pg from 'pg';
import { ProviderKeyStore } from '../accounts/provider-key-store.ts';
import { secretBoxOf } from '../accounts/secret-box.ts';

/**
 * `provider-keys reencrypt`: on the store directly, since the secrets are in its table and a running gateway holds
 * them opened in memory (re-sealing changes nothing it uses). Needs the current key and the previous one(s).
 */
export async function reencryptProviderKeys(pool: pg.Pool, env: NodeJS.ProcessEnv) {
  const box = secretBoxOf(env.GATEWAY_SECRETS_KEY, env.GATEWAY_SECRETS_KEY_PREVIOUS);
  if (!box)
    throw new Error('provider-keys reencrypt needs GATEWAY_SECRETS_KEY (and GATEWAY_SECRETS_KEY_PREVIOUS)');
  const store = new ProviderKeyStore(pool, box);
  return store.reencrypt();
}
