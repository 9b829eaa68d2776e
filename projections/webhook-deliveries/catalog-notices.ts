import type { GatewayEvent } from '../../events/index.ts';
import type { WebhookEventTypeName } from '../../events/webhook.ts';

/** A catalog change as the webhook every account with an endpoint receives. */
export interface CatalogNotice {
  /** Distinguishes the notices of one snapshot event (one per model and type). */
  key: string;
  type: WebhookEventTypeName;
  data: Record<string, unknown>;
}

/** `model.added` and `model.deprecated`, one per model, from a catalog snapshot that records changes. */
export function catalogNoticesOf(event: GatewayEvent): CatalogNotice[] {
  if (event.type !== 'CatalogSnapshotTaken') return [];
  const note = (m: { id: string; provider: string; modality: string; name: string }) => ({
    id: m.id,
    provider: m.provider,
    modality: m.modality,
    name: m.name,
  });
  return [
    ...event.data.added.map((m) => ({ key: `added:${m.id}`, type: 'model.added' as const, data: note(m) })),
    ...event.data.deprecated.map((m) => ({
      key: `deprecated:${m.id}`,
      type: 'model.deprecated' as const,
      data: note(m),
    })),
  ];
}
