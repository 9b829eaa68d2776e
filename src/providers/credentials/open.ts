import type { Config } from '../../config.ts';
import { credentialsOut } from '../../observability/metrics.ts';
import { providerKey } from '../../provider-env.ts';
import { CredentialPools } from './pool.ts';

/** The runtime's pools: the config file's, the environment's single keys, and what an out credential tells. */
export function openCredentialPools(
  config: Pick<Config, 'pools' | 'env'>,
  clock: () => Date,
  log: (line: string) => void,
): CredentialPools {
  const pools = new CredentialPools(
    config.pools,
    (provider) => (provider === 'local' ? undefined : providerKey(provider, config.env)),
    clock,
  );
  pools.onOut((out) => {
    credentialsOut.inc({ provider: out.provider, credential: out.credential, reason: out.reason });
    log(
      `provider credential ${out.provider}/${out.credential} out of rotation (${out.reason}): ${out.message}`,
    );
  });
  return pools;
}
