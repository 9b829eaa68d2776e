import { createHash } from 'node:crypto';
import type { z } from 'zod';
import { type AccountEvent, accountEventSchemas } from './account.ts';
import { type BatchEvent, batchEventSchemas } from './batch.ts';
import { type BudgetEvent, budgetEventSchemas } from './budget.ts';
import { type CacheEvent, cacheEventSchemas } from './cache.ts';
import { type CatalogEvent, catalogEventSchemas } from './catalog.ts';
import { type CredentialEvent, credentialEventSchemas } from './credential.ts';
import type { EventMetadata, NewEvent, StoredEvent } from './envelope.ts';
import { type EvalEvent, evalEventSchemas } from './eval.ts';
import { type FileEvent, fileEventSchemas } from './file.ts';
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

/** Every event the gateway writes, by type. */
export const eventSchemas = {
  ...accountEventSchemas,
  ...budgetEventSchemas,
  ...subAccountEventSchemas,
  ...jobEventSchemas,
  ...fileEventSchemas,
  ...batchEventSchemas,
  ...webhookDeliveryEventSchemas,
  ...webhookSecretEventSchemas,
  ...replayEventSchemas,
  ...cacheEventSchemas,
  ...catalogEventSchemas,
  ...evalEventSchemas,
  ...credentialEventSchemas,
  ...reconciliationEventSchemas,
} as const;

export type EventType = keyof typeof eventSchemas;
export type GatewayEvent =
  | AccountEvent
  | BudgetEvent
  | SubAccountEvent
  | JobEvent
  | FileEvent
  | BatchEvent
  | WebhookDeliveryEvent
  | WebhookSecretEvent
  | ReplayEvent
  | CacheEvent
  | CatalogEvent
  | EvalEvent
  | CredentialEvent
  | ReconciliationEvent;

/** The schema version each event type is written at now; a type's version rises only with an upcaster. */
const CURRENT_VERSIONS: Partial<Record<EventType, number>> = {};

export function currentVersion(type: EventType): number {
  return CURRENT_VERSIONS[type] ?? 1;
}

/**
 * Upcasters turn the data of an older schema version into the current one, per type and from-version.
 * Stored events are never edited; readers upcast.
 */
const upcasters: Partial<Record<EventType, Record<number, (data: unknown) => unknown>>> = {};

export function isKnownType(type: string): type is EventType {
  return Object.hasOwn(eventSchemas, type);
}

export type ParseResult = { ok: true; event: GatewayEvent } | { ok: false; error: string };

/** Validates a stored event against its schema, upcasting older versions first. */
export function parseEvent(stored: Pick<StoredEvent, 'type' | 'data' | 'metadata'>): ParseResult {
  if (!isKnownType(stored.type)) return { ok: false, error: `unknown event type ${stored.type}` };
  let data = stored.data;
  const version = stored.metadata.schemaVersion ?? 1;
  for (let v = version; v < currentVersion(stored.type); v++) {
    const up = upcasters[stored.type]?.[v];
    if (!up) return { ok: false, error: `no upcaster for ${stored.type} v${v}` };
    data = up(data);
  }
  const schema: z.ZodType = eventSchemas[stored.type];
  const parsed = schema.safeParse(data);
  if (!parsed.success) {
    return {
      ok: false,
      error: `${stored.type}: ${parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`,
    };
  }
  return { ok: true, event: { type: stored.type, data: parsed.data } as GatewayEvent };
}

/** The stored event as one of a stream's own event types, or undefined when it fails its schema. */
export function parseAs<E extends GatewayEvent>(
  stored: Pick<StoredEvent, 'type' | 'data' | 'metadata'>,
): E | undefined {
  const parsed = parseEvent(stored);
  return parsed.ok ? (parsed.event as E) : undefined;
}

/** Context a command handler stamps on the events it appends. */
export interface EventContext {
  correlationId?: string;
  causationId?: string;
  now: Date;
}

export function toNewEvent(event: GatewayEvent, id: string, context: EventContext): NewEvent {
  const metadata: EventMetadata = { schemaVersion: currentVersion(event.type) };
  if (context.correlationId) metadata.correlationId = context.correlationId;
  if (context.causationId) metadata.causationId = context.causationId;
  return { id, type: event.type, data: event.data, metadata, occurredAt: context.now };
}

/**
 * A UUID derived from a name (RFC 4122 version 5 layout over SHA-256), for events whose retry must not
 * append twice: the same name always gives the same id, and the store ignores a stored id.
 */
export function deterministicEventId(name: string): string {
  const bytes = createHash('sha256').update(name).digest().subarray(0, 16);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x50;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
