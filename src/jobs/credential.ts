import type { JobCall } from '../contracts/jobs.ts';
import type { JobsDeps, Target } from './service.ts';

/** A job's call on one credential of its provider's pool, by name (absent: the provider's single key). */
export interface Keyed {
  call: JobCall;
  credential?: string;
}

/**
 * The credential a job is submitted on: the pool's draw, as a served call's. None (no pool, a local model, none in
 * rotation) leaves the job on the provider's single key, as before pools.
 */
export function drawnCall(deps: Pick<JobsDeps, 'credentials'>, target: Target, call: JobCall): Keyed {
  const provider = target.model.provider;
  const drawn = provider === 'local' ? undefined : deps.credentials?.pick(provider, new Set());
  if (!drawn) return { call };
  return { call: { ...call, upstream: { ...call.upstream, apiKey: drawn.key } }, credential: drawn.name };
}

/**
 * The call a submitted job is polled or cancelled with: the credential it was submitted on, which the provider holds
 * it under, whatever its rest or pause. One since removed from the pool, or refused by the provider, is `unusable`,
 * with a message naming it (never another key's 404).
 */
export function ownerCall(
  deps: Pick<JobsDeps, 'credentials'>,
  target: Target,
  call: JobCall,
  credential: string | undefined,
): Keyed | { unusable: string } {
  if (credential === undefined || !deps.credentials) return { call };
  const provider = target.model.provider;
  const owner = deps.credentials.owner(provider, credential);
  if ('unusable' in owner)
    return {
      unusable: `the ${provider} credential '${credential}' that submitted this job ${owner.unusable}`,
    };
  return { call: { ...call, upstream: { ...call.upstream, apiKey: owner.key } }, credential };
}
