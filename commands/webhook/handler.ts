import { randomUUID } from 'node:crypto';
import { deterministicEventId, parseAs, toNewEvent } from '../../events/index.ts';
import type { EventStore } from '../../events/store.ts';
import {
  type WebhookDeliveryEvent,
  type WebhookSecretEvent,
  webhookSecretStream,
  webhookStream,
} from '../../events/webhook.ts';
import { type Decision, StreamWriter } from '../stream-writer.ts';
import { type DeliveryCommand, type DeliveryState, decide, evolve, initialState } from './delivery.ts';
import {
  decideSecret,
  evolveSecret,
  initialSecretState,
  type RotateSecret,
  type SecretState,
} from './secret.ts';

interface Contextual<Command> {
  command: Command;
  now: Date;
  correlationId?: string;
}

/** Delivery and secret commands, each decided and appended by one writer per stream. */
export class WebhookCommands {
  private readonly deliveries: StreamWriter<DeliveryState, Contextual<DeliveryCommand>, WebhookDeliveryEvent>;
  private readonly secrets: StreamWriter<SecretState, Contextual<RotateSecret>, WebhookSecretEvent>;

  constructor(private readonly store: EventStore) {
    this.deliveries = new StreamWriter(store, {
      initialState,
      evolve,
      decide: ({ command }, state) => decide(command, state),
      parse: (stored) => parseAs<WebhookDeliveryEvent>(stored),
      serialize: (event, { now, correlationId }, stream) =>
        toNewEvent(event, deliveryEventId(stream, event), { now, correlationId }),
    });
    this.secrets = new StreamWriter(store, {
      initialState: initialSecretState,
      evolve: evolveSecret,
      decide: ({ command }, state) => decideSecret(command, state),
      parse: (stored) => parseAs<WebhookSecretEvent>(stored),
      serialize: (event, { now, correlationId }, stream) =>
        toNewEvent(event, deterministicEventId(`${stream}/generation/${event.data.generation}`), {
          now,
          correlationId,
        }),
    });
  }

  delivery(
    deliveryId: string,
    command: DeliveryCommand,
    now: Date,
  ): Promise<Decision<DeliveryState, WebhookDeliveryEvent>> {
    return this.deliveries.submit(webhookStream(deliveryId), { command, now });
  }

  rotate(
    command: RotateSecret,
    now: Date,
    correlationId?: string,
  ): Promise<Decision<SecretState, WebhookSecretEvent>> {
    return this.secrets.submit(webhookSecretStream(command.keyId), { command, now, correlationId });
  }

  /** The key's current generation, read from its stream (strongly consistent on every instance). */
  async generation(keyId: string): Promise<number> {
    let state = initialSecretState();
    for (const stored of await this.store.readStream(webhookSecretStream(keyId))) {
      const event = parseAs<WebhookSecretEvent>(stored);
      if (event) state = evolveSecret(state, event);
    }
    return state.generation;
  }
}

/** A request is stored once per delivery id; attempts are ordered by the stream's expected revision. */
function deliveryEventId(stream: string, event: WebhookDeliveryEvent): string {
  if (event.type === 'WebhookDeliveryRequested') return deterministicEventId(`${stream}/requested`);
  if (event.type === 'WebhookAbandoned') return deterministicEventId(`${stream}/abandoned`);
  return randomUUID();
}
