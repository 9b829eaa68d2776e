import { describe, expect, it } from 'vitest';
import { accountStream } from '../../events/account.ts';
import { batchStream } from '../../events/batch.ts';
import { budgetStream } from '../../events/budget.ts';
import { cacheStream } from '../../events/cache.ts';
import { CATALOG_STREAM } from '../../events/catalog.ts';
import { categorize, type EventCategory } from '../../events/categories.ts';
import { credentialStream } from '../../events/credential.ts';
import { streamCategory } from '../../events/envelope.ts';
import { evalStream } from '../../events/eval.ts';
import { fileStream } from '../../events/file.ts';
import { eventSchemas, type GatewayEvent } from '../../events/index.ts';
import { jobStream } from '../../events/job.ts';
import { reconciliationStream } from '../../events/reconciliation.ts';
import { replayStream } from '../../events/replay.ts';
import { subAccountStream } from '../../events/subaccount.ts';
import { webhookSecretStream, webhookStream } from '../../events/webhook.ts';

describe('event categories', () => {
  it('names every event type by the category of the stream it is written to', () => {
    const streams: Record<EventCategory, string> = {
      account: accountStream('a'),
      budget: budgetStream('a', '2025-01'),
      subaccount: subAccountStream('s'),
      job: jobStream('j'),
      file: fileStream('f'),
      batch: batchStream('b'),
      webhook: webhookStream('d'),
      webhooksecret: webhookSecretStream('k'),
      replay: replayStream('r'),
      eval: evalStream('e'),
      cache: cacheStream('a'),
      catalog: CATALOG_STREAM,
      credential: credentialStream('openai'),
      reconciliation: reconciliationStream('openai', '2025-01-31'),
    };
    for (const [category, stream] of Object.entries(streams)) expect(streamCategory(stream)).toBe(category);
    for (const type of Object.keys(eventSchemas)) {
      const { category } = categorize({ type, data: {} } as GatewayEvent);
      expect(Object.keys(streams), type).toContain(category);
    }
    expect(categorize({ type: 'SpendSettled', data: {} } as GatewayEvent).category).toBe('budget');
    expect(categorize({ type: 'WebhookEndpointSet', data: {} } as GatewayEvent).category).toBe('account');
  });
});
