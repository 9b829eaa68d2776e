import type { CredentialPools } from '../providers/credentials/pool.ts';
import type { Candidate } from './call.ts';

/**
 * Which credential a call should keep when it can (docs/providers.md, Key pools): `prefer`, the one a follow-up's
 * earlier response was served on; `key`, the conversation's opening, whose last credential is remembered. A preferred
 * credential that is out, cooling or at a limit gives way to the pool's draw: the gateway holds the conversation, so
 * any credential can serve it (only the provider's prompt cache is lost).
 */
export interface Affinity {
  prefer?: string;
  /** Made only when the provider's pool has a choice to make (it hashes the conversation's opening). */
  key?: () => string;
}

/** A candidate whose adapter calls with `upstream.apiKey` (chat, messages): the ones a pool can key. */
type Keyed = Candidate & { upstream: { apiKey: string } };

export function keyed(candidate: Candidate): candidate is Keyed {
  const upstream = (candidate as { upstream?: { apiKey?: unknown } }).upstream;
  return candidate.model.provider !== 'local' && typeof upstream?.apiKey === 'string';
}

/**
 * One call on a credential of the provider's pool. A credential the provider rate limits or refuses is judged by
 * the pool (resting, or out of rotation) and the same call moves on at once to another; once none is left, the
 * last provider answer (or, when none was tried, the pool's own, as the provider would give it) is the failure,
 * which the retries around this may still wait out. Resolves with the name of the credential that served.
 */
export async function withCredential<C extends Candidate, T>(
  pools: CredentialPools | undefined,
  candidate: C,
  call: (candidate: C) => Promise<T>,
  affinity: Affinity = {},
): Promise<{ result: T; credential?: string }> {
  if (!pools || !keyed(candidate)) return { result: await call(candidate) };
  const provider = candidate.model.provider;
  const tried = new Set<string>();
  // The credential the conversation was served on first, when it is still usable; else the pool's draw.
  const key = affinity.key && pools.size(provider) > 1 ? affinity.key() : undefined;
  const preferred = affinity.prefer ?? (key && pools.affinity.recall(provider, key));
  let failure: unknown;
  for (;;) {
    const credential =
      (tried.size === 0 && preferred && pools.pickNamed(provider, preferred, tried)) ||
      pools.pick(provider, tried);
    if (!credential) throw failure ?? pools.exhausted(provider);
    tried.add(credential.name);
    try {
      const upstream = { ...candidate.upstream, apiKey: credential.key };
      const result = await call({ ...candidate, upstream });
      pools.served(provider, credential.name);
      if (key) pools.affinity.remember(provider, key, credential.name);
      return { result, credential: credential.name };
    } catch (error) {
      if (!pools.judge(provider, credential.name, error)) throw error;
      failure = error;
    }
  }
}
