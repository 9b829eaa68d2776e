import type { CredentialPools } from '../providers/credentials/pool.ts';
import type { Candidate } from './call.ts';

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
): Promise<{ result: T; credential?: string }> {
  if (!pools || !keyed(candidate)) return { result: await call(candidate) };
  const provider = candidate.model.provider;
  const tried = new Set<string>();
  let failure: unknown;
  for (;;) {
    const credential = pools.pick(provider, tried);
    if (!credential) throw failure ?? pools.exhausted(provider);
    tried.add(credential.name);
    try {
      const upstream = { ...candidate.upstream, apiKey: credential.key };
      const result = await call({ ...candidate, upstream });
      pools.served(provider, credential.name);
      return { result, credential: credential.name };
    } catch (error) {
      if (!pools.judge(provider, credential.name, error)) throw error;
      failure = error;
    }
  }
}
