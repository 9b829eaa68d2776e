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
