import { z } from 'zod';
import { Nanos } from './money.ts';

/**
 * Events of the `credential-{provider}` stream: what the operator's credentials of one provider went through that
 * the operator should hear of, and the credentials the operator added at runtime. Not an account's: the operator's own notices name the operator's account, when one
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

/** The operator's settings of a credential added through the admin API or CLI (the config file's are not events). */
const CredentialSettings = {
  provider: z.string(),
  /** Its name in the pool; charges, health and the admin API name it so. */
  credential: z.string(),
  weight: z.number().int().min(0),
  /** Requests and tokens per minute, pass-through per UTC month (nano-dollars); null: no such limit. */
  rpm: z.number().int().positive().nullable(),
  tpm: z.number().int().positive().nullable(),
  monthlySpendNanos: Nanos.nullable(),
};

/**
 * The operator added a credential to the provider's pool (`POST /admin/providers/{provider}/credentials`). The
 * secret is not here: it is sealed in the `provider_credentials` table, which every instance reads on this event.
 */
export const ProviderCredentialAdded = z.object({
  ...CredentialSettings,
  /** The secret's last four characters, to recognise it; never more. */
  last4: z.string(),
});

/** The operator changed an added credential's weight or limits: its settings as they now stand. */
export const ProviderCredentialChanged = z.object(CredentialSettings);

/** The operator removed an added credential from the pool; its sealed secret is deleted. */
export const ProviderCredentialRemoved = z.object({ provider: z.string(), credential: z.string() });

export const credentialEventSchemas = {
  ProviderCredentialRefused,
  ProviderCredentialAdded,
  ProviderCredentialChanged,
  ProviderCredentialRemoved,
} as const;

export type CredentialEvent =
  | { type: 'ProviderCredentialRefused'; data: z.infer<typeof ProviderCredentialRefused> }
  | { type: 'ProviderCredentialAdded'; data: z.infer<typeof ProviderCredentialAdded> }
  | { type: 'ProviderCredentialChanged'; data: z.infer<typeof ProviderCredentialChanged> }
  | { type: 'ProviderCredentialRemoved'; data: z.infer<typeof ProviderCredentialRemoved> };

/** The events by which the operator adds, changes and removes credentials (not the providers' refusals). */
export type OperatorCredentialEvent = Exclude<CredentialEvent, { type: 'ProviderCredentialRefused' }>;

export const credentialStream = (provider: string) => `credential-${provider}`;
