import type { JobState } from '../../commands/job/decide.ts';
import { RequestRefused } from '../contracts/errors.ts';
import type { JobCall, Submission } from '../contracts/jobs.ts';
import { givesWay, ownKeyCredential, ownKeyName, ownKeyRoute } from '../pipeline/own-key.ts';
import type { JobsDeps, QueuedJob, Target } from './service.ts';

/**
 * A job's call on one credential: one of its provider's pool, by name (absent: the provider's single key), or the
 * requester's own provider key (`byok:<name>`, with the key's id).
 */
export interface Keyed {
  call: JobCall;
  credential?: string;
  providerKeyId?: string;
}

/** A submission, and the credential it went out on: the provider now holds the job under that key. */
export interface Submitted extends Keyed {
  submission: Submission;
}

const withApiKey = (call: JobCall, apiKey: string): JobCall => ({
  ...call,
  upstream: { ...call.upstream, apiKey },
});

/**
 * Submits a job on its requester's own key for the provider when it has one (docs/providers.md, Bring your own key),
 * else on the pool's draw. A failure of the own key is the job's, as any provider refusal, unless the account lets a
 * refused or rate-limited own key give way to the operator's pool (`byok_fallback`).
 */
export async function submitOnKey(
  deps: Pick<JobsDeps, 'credentials' | 'ownKeys'>,
  job: QueuedJob,
  target: Target,
  call: JobCall,
): Promise<Submitted> {
  const own = ownKeyRoute(deps.ownKeys, job, target);
  if (own) {
    const { key } = own;
    try {
      if ('unreadable' in key)
        throw new RequestRefused(
          'unavailable',
          `your ${target.model.provider} key '${key.name}' cannot be read by the gateway (${key.unreadable}); tell the operator, or remove and register it again`,
        );
      const keyed = {
        call: withApiKey(call, key.key),
        credential: ownKeyCredential(key.name),
        providerKeyId: key.id,
      };
      return { ...keyed, submission: await target.adapter.submit(keyed.call) };
    } catch (error) {
      if (!own.fallback || !givesWay(error)) throw error;
    }
  }
  const keyed = drawnCall(deps, target, call);
  return { ...keyed, submission: await target.adapter.submit(keyed.call) };
}

/**
 * The pool's draw, as a served call's. None (no pool, a local model, none in rotation) leaves the job on the
 * provider's single key, as before pools.
 */
function drawnCall(deps: Pick<JobsDeps, 'credentials'>, target: Target, call: JobCall): Keyed {
  const provider = target.model.provider;
  const drawn = provider === 'local' ? undefined : deps.credentials?.pick(provider, new Set());
  if (!drawn) return { call };
  return { call: withApiKey(call, drawn.key), credential: drawn.name };
}

/**
 * The call a submitted job is polled or cancelled with: the credential it was submitted on, which the provider holds
 * it under, whatever its rest or pause. One since removed from the pool, or refused by the provider, or an own key
 * since removed (or no longer readable), is `unusable`, with a message naming it (never another key's 404).
 */
export function ownerCall(
  deps: Pick<JobsDeps, 'credentials' | 'ownKeys'>,
  job: QueuedJob,
  target: Target,
  call: JobCall,
  held: Pick<JobState, 'credential' | 'providerKeyId'>,
): Keyed | { unusable: string } {
  const { credential } = held;
  const provider = target.model.provider;
  const ownKey = ownKeyName(credential);
  if (ownKey !== undefined) {
    // By id: a key registered since under the same name may belong to another of the provider's organizations.
    const key = held.providerKeyId && deps.ownKeys?.ownKeyById(job, held.providerKeyId);
    const yours = `your ${provider} key '${ownKey}' that submitted this job`;
    if (!key) return { unusable: `${yours} has been removed` };
    if ('unreadable' in key)
      return { unusable: `${yours} cannot be read by the gateway (${key.unreadable})` };
    return { call: withApiKey(call, key.key), credential, providerKeyId: key.id };
  }
  if (credential === undefined || !deps.credentials) return { call };
  const owner = deps.credentials.owner(provider, credential);
  if ('unusable' in owner)
    return {
      unusable: `the ${provider} credential '${credential}' that submitted this job ${owner.unusable}`,
    };
  return { call: withApiKey(call, owner.key), credential };
}
