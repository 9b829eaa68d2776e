import { accountsProjection } from './accounts/index.ts';
import { apiKeysProjection } from './api-keys/index.ts';
import { balancesProjection } from './balances/index.ts';
import { batchesProjection } from './batches/index.ts';
import { evalsProjection } from './evals/index.ts';
import { filesProjection } from './files/index.ts';
import { holdsProjection } from './holds/index.ts';
import { jobsProjection } from './jobs/index.ts';
import { reconciliationsProjection } from './reconciliations/index.ts';
import { replaysProjection } from './replays/index.ts';
import { requestsProjection } from './requests/index.ts';
import { routingProjection } from './routing/index.ts';
import { statementsProjection } from './statements/index.ts';
import { subAccountsProjection } from './sub-accounts/index.ts';
import { tagBudgetsProjection } from './tag-budgets/index.ts';
import type { Projection } from './types.ts';
import { usageProjection } from './usage/index.ts';
import { webhookDeliveriesProjection } from './webhook-deliveries/index.ts';

export const projections: readonly Projection[] = [
  accountsProjection,
  apiKeysProjection,
  balancesProjection,
  usageProjection,
  subAccountsProjection,
  holdsProjection,
  tagBudgetsProjection,
  jobsProjection,
  filesProjection,
  batchesProjection,
  replaysProjection,
  evalsProjection,
  webhookDeliveriesProjection,
  requestsProjection,
  routingProjection,
  statementsProjection,
  reconciliationsProjection,
];

export function projectionNamed(name: string): Projection | undefined {
  return projections.find((p) => p.name === name);
}
