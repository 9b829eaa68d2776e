import { type AccountEvent, accountEventSchemas } from './account.ts';
import { type BatchEvent, batchEventSchemas } from './batch.ts';
import { type BudgetEvent, budgetEventSchemas } from './budget.ts';
import { type CacheEvent, cacheEventSchemas } from './cache.ts';
import { type CatalogEvent, catalogEventSchemas } from './catalog.ts';
import { type CredentialEvent, credentialEventSchemas } from './credential.ts';
import { type EvalEvent, evalEventSchemas } from './eval.ts';
import { type FileEvent, fileEventSchemas } from './file.ts';
import type { GatewayEvent } from './index.ts';
import { type JobEvent, jobEventSchemas } from './job.ts';
import { type ReconciliationEvent, reconciliationEventSchemas } from './reconciliation.ts';
import { type ReplayEvent, replayEventSchemas } from './replay.ts';
import { type SubAccountEvent, subAccountEventSchemas } from './subaccount.ts';
import {
  type WebhookDeliveryEvent,
  type WebhookSecretEvent,
  webhookDeliveryEventSchemas,
  webhookSecretEventSchemas,
} from './webhook.ts';

/** The events of each stream category (the text before the first `-` of the stream name). */
export interface EventsByCategory {
  account: AccountEvent;
  budget: BudgetEvent;
  subaccount: SubAccountEvent;
  job: JobEvent;
  file: FileEvent;
  batch: BatchEvent;
  webhook: WebhookDeliveryEvent;
  webhooksecret: WebhookSecretEvent;
  replay: ReplayEvent;
  cache: CacheEvent;
  catalog: CatalogEvent;
  eval: EvalEvent;
  credential: CredentialEvent;
  reconciliation: ReconciliationEvent;
}

export type EventCategory = keyof EventsByCategory;

/** An event tagged with its category: switch on `category` first, then on the event's own type. */
export type CategorizedEvent = {
  [C in EventCategory]: { category: C; event: EventsByCategory[C] };
}[EventCategory];

// Both directions, so a category added to GatewayEvent but not here (or the reverse) fails the typecheck.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const _coversEveryEvent: Same<EventsByCategory[EventCategory], GatewayEvent> = true;

const schemasByCategory: Record<EventCategory, object> = {
  account: accountEventSchemas,
  budget: budgetEventSchemas,
  subaccount: subAccountEventSchemas,
  job: jobEventSchemas,
  file: fileEventSchemas,
  batch: batchEventSchemas,
  webhook: webhookDeliveryEventSchemas,
  webhooksecret: webhookSecretEventSchemas,
  replay: replayEventSchemas,
  cache: cacheEventSchemas,
  catalog: catalogEventSchemas,
  eval: evalEventSchemas,
  credential: credentialEventSchemas,
  reconciliation: reconciliationEventSchemas,
};

const categoryOfType = new Map<string, EventCategory>(
  Object.entries(schemasByCategory).flatMap(([category, schemas]) =>
    Object.keys(schemas).map((type) => [type, category as EventCategory] as const),
  ),
);

/**
 * The category of the streams an event type is written to, read from the catalogue above (which the typecheck
 * holds to every event): undefined for a type the catalogue does not have.
 */
export function categoryOf(type: string): EventCategory | undefined {
  return categoryOfType.get(type);
}

/**
 * The event with its category, so that a reader interested in a few categories ignores the others as a
 * whole and a new event type touches only the readers of its own category.
 */
export function categorize(event: GatewayEvent): CategorizedEvent {
  const category = categoryOfType.get(event.type);
  if (!category) throw new Error(`event type ${event.type} has no category`);
  return { category, event } as CategorizedEvent;
}
