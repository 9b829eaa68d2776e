import type { LimitReached } from './limits.ts';

/**
 * `active`: in rotation; `cooling`: a 429 rests it until `until`; `out`: refused by the provider (401, 403, a
 * quota or billing refusal) or taken out by the operator, until the operator puts it back.
 */
export type CredentialState = 'active' | 'cooling' | 'out';
export type OutReason = 'unauthorized' | 'forbidden' | 'quota' | 'operator';

/** A credential as the health report and the admin API show it: never its secret. */
export interface CredentialReport {
  name: string;
  weight: number;
  state: CredentialState;
  reason: OutReason | 'rate_limited' | null;
  since: string | null;
  /** When a cooling credential returns to rotation. */
  until: string | null;
  /** The provider's own words when it refused the credential. */
  message: string | null;
  /** The operator's limit the credential is at (skipped until `until`), when it is at one. */
  limit: { reached: LimitReached; until: string } | null;
}

/** A credential the pool took out of rotation on a provider's refusal (not the operator's own action). */
export interface CredentialOut {
  provider: string;
  credential: string;
  reason: Exclude<OutReason, 'operator'>;
  status: number | null;
  message: string;
  at: Date;
}
