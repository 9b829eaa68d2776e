import type pg from 'pg';
import { WebhookCommands } from '../../commands/webhook/handler.ts';
import type { EventStore } from '../../events/store.ts';
import type { WebhookEventTypeName } from '../../events/webhook.ts';
import {
  type DeliveryRow,
  deliveryStatusesOf,
  deliveryStatusOf,
} from '../../projections/webhook-deliveries/queries.ts';
import { deliveryIdOf, webhookEventIdOf } from './ids.ts';
import { WebhookSecrets } from './secrets.ts';

export interface WebhookRequest {
  accountId: string;
  /** The key whose secret signs the callback: for a job, the key that created it. */
  keyId: string;
  /** Checked at submission with checkWebhookUrl; checked again on every attempt. */
  url: string;
  type: WebhookEventTypeName;
  /** The WebhookEvent's `data`. */
  data: Record<string, unknown>;
  /** What the callback is about, e.g. `job:<job id>`: one delivery per source, whatever the retries. */
  source: string;
  /** The WebhookEvent's `occurred_at`; the clock's now when absent. */
  occurredAt?: Date;
}

/**
 * Signed webhook deliveries: the API the rest of the gateway calls. A request appends WebhookDeliveryRequested
 * (once per source); the delivery worker makes the attempts.
 */
export class Webhooks {
  readonly commands: WebhookCommands;
  readonly secrets: WebhookSecrets;

  constructor(
    store: EventStore,
    adminToken: string,
    private readonly pool: pg.Pool,
    private readonly clock: () => Date = () => new Date(),
  ) {
    this.commands = new WebhookCommands(store);
    this.secrets = new WebhookSecrets(adminToken, this.commands, clock);
  }

  /** Records the delivery and returns its id (`whd_…`); asking again for a source returns the same id. */
  async request(request: WebhookRequest): Promise<string> {
    const deliveryId = deliveryIdOf(request.source);
    const eventId = webhookEventIdOf(request.source);
    const now = this.clock();
    const body = JSON.stringify({
      id: eventId,
      type: request.type,
      occurred_at: Math.floor((request.occurredAt ?? now).getTime() / 1000),
      data: request.data,
    });
    await this.commands.delivery(
      deliveryId,
      {
        type: 'RequestDelivery',
        deliveryId,
        accountId: request.accountId,
        keyId: request.keyId,
        url: request.url,
        eventType: request.type,
        eventId,
        body,
        source: request.source,
        now,
      },
      now,
    );
    return deliveryId;
  }

  /** The source's delivery as projected (a moment behind `request`); `status === 'delivered'` once a 2xx came. */
  statusOf(source: string): Promise<DeliveryRow | undefined> {
    return deliveryStatusOf(this.pool, source);
  }

  statusesOf(sources: readonly string[]): Promise<Map<string, DeliveryRow>> {
    return deliveryStatusesOf(this.pool, sources);
  }
}
