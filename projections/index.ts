import { accountsProjection } from './accounts/index.ts';
import { apiKeysProjection } from './api-keys/index.ts';
import { balancesProjection } from './balances/index.ts';
import { holdsProjection } from './holds/index.ts';
import { subAccountsProjection } from './sub-accounts/index.ts';
import { tagBudgetsProjection } from './tag-budgets/index.ts';
import type { Projection } from './types.ts';
import { usageProjection } from './usage/index.ts';

export const projections: readonly Projection[] = [
  accountsProjection,
  apiKeysProjection,
  balancesProjection,
  usageProjection,
  subAccountsProjection,
  holdsProjection,
  tagBudgetsProjection,
];

export function projectionNamed(name: string): Projection | undefined {
  return projections.find((p) => p.name === name);
}
