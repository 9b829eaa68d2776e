import { accountsProjection } from './accounts/index.ts';
import { apiKeysProjection } from './api-keys/index.ts';
import { balancesProjection } from './balances/index.ts';
import type { Projection } from './types.ts';

export const projections: readonly Projection[] = [accountsProjection, apiKeysProjection, balancesProjection];

export function projectionNamed(name: string): Projection | undefined {
  return projections.find((p) => p.name === name);
}
