import { z } from 'zod';
import { NANOS_PER_CENT } from '../../../../events/money.ts';
import type { CredentialChange, NewCredential } from '../../../accounts/operator-credentials.ts';

const nanosOf = (cents: number) => (BigInt(cents) * NANOS_PER_CENT).toString();

/** `POST .../credentials`'s body as the operator's credential: weight 1 by default, limits absent are none. */
export function newCredentialOf(body: {
  name: string;
  key: string;
  weight?: number | undefined;
  rpm?: number | undefined;
  tpm?: number | undefined;
  monthly_spend_cents?: number | undefined;
}): NewCredential {
  return {
    name: body.name,
    key: body.key,
    weight: body.weight ?? 1,
    rpm: body.rpm ?? null,
    tpm: body.tpm ?? null,
    monthlySpendNanos: body.monthly_spend_cents === undefined ? null : nanosOf(body.monthly_spend_cents),
  };
}

/** `PATCH .../credentials/{name}`'s body: a field absent is kept, a null limit removed. */
export function changeOf(body: {
  weight?: number | undefined;
  rpm?: number | null | undefined;
  tpm?: number | null | undefined;
  monthly_spend_cents?: number | null | undefined;
}): CredentialChange {
  const spend = body.monthly_spend_cents;
  return {
    ...(body.weight !== undefined && { weight: body.weight }),
    ...(body.rpm !== undefined && { rpm: body.rpm }),
    ...(body.tpm !== undefined && { tpm: body.tpm }),
    ...(spend !== undefined && { monthlySpendNanos: spend === null ? null : nanosOf(spend) }),
  };
}

/**
 * A credential as the admin routes answer it (`CredentialView`): what `/v1/health/providers` shows, with its source,
 * `last4` and limits. Declared so that the OpenAPI document describes it, and, as the answer is serialized through
 * it, a field added to the view later (a secret among them) is left out rather than sent.
 */
export const CredentialBody = z.object({
  name: z.string(),
  weight: z.number().int().min(0),
  state: z.enum(['active', 'cooling', 'out']),
  reason: z.enum(['unauthorized', 'forbidden', 'quota', 'operator', 'rate_limited']).nullable(),
  since: z.string().nullable(),
  until: z.string().nullable(),
  message: z.string().nullable(),
  limit: z.object({ reached: z.enum(['rpm', 'tpm', 'monthly_spend']), until: z.string() }).nullable(),
  source: z.enum(['api', 'config']),
  last4: z.string(),
  limits: z.object({
    rpm: z.number().int().nullable(),
    tpm: z.number().int().nullable(),
    monthly_spend_cents: z.number().int().nullable(),
  }),
});

const PoolBody = z.object({ provider: z.string(), credentials: z.array(CredentialBody) });

export const CredentialResponses = {
  list: { 200: z.object({ object: z.literal('list'), data: z.array(PoolBody) }) },
  pool: { 200: PoolBody },
  // Absent only if the credential went (another request removed it) between the change and the answer.
  one: { 200: z.object({ provider: z.string(), credential: CredentialBody.optional() }) },
  removed: {
    200: z.object({
      object: z.literal('provider_credential'),
      provider: z.string(),
      name: z.string(),
      deleted: z.literal(true),
    }),
  },
};
