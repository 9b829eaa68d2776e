import { createHash } from 'node:crypto';

const digest = (name: string) => createHash('sha256').update(name).digest('hex').slice(0, 32);

/**
 * Ids derive from the delivery's source, so that a source asked for twice (a retried job completion, a notice
 * dispatched again after a restart) is one delivery with one WebhookEvent id.
 */
export const deliveryIdOf = (source: string) => `whd_${digest(`delivery/${source}`)}`;
export const webhookEventIdOf = (source: string) => `evt_${digest(`event/${source}`)}`;
