import type { KeyHolder } from '../accounts/live-keys.ts';
import type { OwnKey } from '../accounts/provider-key-store.ts';
import { RequestRefused } from '../contracts/errors.ts';
import { priceCharge } from '../contracts/money.ts';
import type { CredentialPools } from '../providers/credentials/pool.ts';
import { UpstreamError } from '../providers/errors.ts';
import type { Candidate } from './call.ts';
import { type Affinity, keyed, withCredential } from './credentials.ts';
import type { Bill } from './types.ts';

/** A requester's own key names its charges `byok:<name>`; a pool credential's name never holds a colon. */
const OWN_KEY = 'byok:';

/** The credential name of the requester's own key `name`, as its charges and records carry it. */
export const ownKeyCredential = (name: string): string => `${OWN_KEY}${name}`;

/** The own key's name when `credential` names one (a call served on the requester's own key), else undefined. */
export function ownKeyName(credential: string | undefined): string | undefined {
  return credential?.startsWith(OWN_KEY) ? credential.slice(OWN_KEY.length) : undefined;
}

/** The provider keys accounts bring (accounts/provider-keys.ts), as a call asks them. */
export interface OwnKeys {
  ownKey(holder: Pick<KeyHolder, 'accountId' | 'subAccountId'>, provider: string): OwnKey | undefined;
  /** Whether a failing own key may give way to the operator's pool (`byok_fallback`). */
  fallback(accountId: string): boolean;
}

/** The requester's own key for a candidate's provider, and whether the operator's pool stands behind it. */
export interface OwnKeyRoute {
  key: OwnKey;
  fallback: boolean;
}

/** Whose own provider keys a call of `context` at `discount` may use: the requester's, or none (`ownKeys`). */
export function ownerOf(
  context: { auth: Pick<KeyHolder, 'accountId' | 'subAccountId'>; ownKeys?: boolean },
  discount: string,
): Pick<KeyHolder, 'accountId' | 'subAccountId'> | undefined {
  return (context.ownKeys ?? discount === 'none') ? context.auth : undefined;
}

export function ownKeyRoute(
  ownKeys: OwnKeys | undefined,
  owner: Pick<KeyHolder, 'accountId' | 'subAccountId'> | undefined,
  candidate: Candidate,
): OwnKeyRoute | undefined {
  if (!ownKeys || !owner || !keyed(candidate)) return undefined;
  const key = ownKeys.ownKey(owner, candidate.model.provider);
  return key && { key, fallback: ownKeys.fallback(owner.accountId) };
}

/**
 * The call on the requester's own key first. Without fallback its failure is the client's answer, as the provider
 * gave it; with fallback a refusal of the key itself (401, 403, 402, a quota or billing error) or a 429 moves the
 * call to the operator's pool, where it is charged as any other call. Resolves with the credential that served:
 * `byok:<name>` and `ownKey` for the requester's own.
 */
export async function withOwnKey<C extends Candidate, T>(
  pools: CredentialPools | undefined,
  route: OwnKeyRoute | undefined,
  candidate: C,
  call: (candidate: C) => Promise<T>,
  affinity?: Affinity,
): Promise<{ result: T; credential?: string; ownKey?: true }> {
  if (!route) return withCredential(pools, candidate, call, affinity);
  const { key } = route;
  try {
    if ('unreadable' in key)
      throw new RequestRefused(
        'unavailable',
        `your ${candidate.model.provider} key '${key.name}' cannot be read by the gateway (${key.unreadable}); tell the operator, or remove and register it again`,
      );
    const upstream = { ...(candidate as C & { upstream: object }).upstream, apiKey: key.key };
    const result = await call({ ...candidate, upstream });
    return { result, credential: ownKeyCredential(key.name), ownKey: true };
  } catch (error) {
    if (!route.fallback || !givesWay(error)) throw error;
  }
  return withCredential(pools, candidate, call, affinity);
}

/** Whether a failure of the requester's own key lets the call move to the operator's pool (`byok_fallback`). */
export function givesWay(error: unknown): boolean {
  if (error instanceof RequestRefused) return error.kind === 'unavailable';
  if (!(error instanceof UpstreamError)) return false;
  if (error.code === 'insufficient_quota' || error.code === 'billing_error') return true;
  return error.failure === 'rate_limited' || [401, 402, 403].includes(error.status ?? 0);
}

/**
 * A call served on the requester's own key is charged the platform fee alone, on the pass-through it would have
 * cost (which the provider bills the requester directly): the same lines, priced with the `byok` discount.
 */
export function ownKeyBill(bill: Bill): Bill {
  return { ...bill, charge: priceCharge(bill.charge.lines, 'byok') };
}
