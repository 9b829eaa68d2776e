import { z } from 'zod';

/**
 * Events of the `credential-{provider}` stream: what the operator's credentials of one provider went through that
 * the operator should hear of. Not an account's: the operator's own notices name the operator's account, when one
 * is configured, only as where the webhook goes.
 */

const Instant = z.iso.datetime({ offset: true });

/**
 * The provider refused one of the operator's credentials (401, 403, a quota or billing refusal) and an instance
 * took it out of rotation. Recorded once however many instances see the refusal (docs/providers.md#key-pools);
 * becomes the `provider.credential.out` webhook to the operator's account.
 */
export const ProviderCredentialRefused = z.object({
  provider: z.string(),
  /** The credential's name in its pool, never its secret. */
  credential: z.string(),
  reason: z.enum(['unauthorized', 'forbidden', 'quota']),
  status: z.number().int().nullable(),
  /** The provider's own words, with the credential's secret blanked out should they quote it. */
  message: z.string(),
  at: Instant,
  /** Where the notice goes (GATEWAY_OPERATOR_ACCOUNT when it was recorded); null: nowhere. */
  operatorAccountId: z.string().nullable(),
});

export const credentialEventSchemas = { ProviderCredentialRefused } as const;

export type CredentialEvent = {
  type: 'ProviderCredentialRefused';
  data: z.infer<typeof ProviderCredentialRefused>;
};

export const credentialStream = (provider: string) => `credential-${provider}`;
