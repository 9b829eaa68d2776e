import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';

// A provider-less id from a provider's own examples, on a gateway with no provider key: it names its maker's model
// and the key to set (docs/clients.md), not an ambiguity among the providers that have a model of that name.
const say = (content: string) => [{ role: 'user' as const, content }];

describe('with no provider key at all', () => {
  let keyless: TestGateway;
  let keylessKey: string;
  beforeAll(async () => {
    keyless = await startTestGateway();
    keylessKey = (await json(await keyless.admin('/accounts', { name: 'keyless' }))).key;
  });
  afterAll(async () => {
    await keyless?.close();
  });

  it('a provider-less id names its maker’s model and the key to set, not an ambiguity', async () => {
    const sdk = new OpenAI({ apiKey: keylessKey, baseURL: `${keyless.url}/v1`, maxRetries: 0 });
    await expect(
      sdk.chat.completions.create({ model: 'gpt-4o-mini', messages: say('hi') }),
    ).rejects.toMatchObject({
      status: 400,
      param: 'model',
      message: expect.stringContaining(
        'gpt-4o-mini (openai/gpt-4o-mini) is not available on this gateway (set OPENAI_API_KEY)',
      ),
    });
    const claude = await fetch(`${keyless.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': keylessKey, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 8, messages: say('hi') }),
    });
    expect(claude.status).toBe(400);
    expect((await json(claude)).error.message).toContain(
      'anthropic/claude-sonnet-4-5 is not available on this gateway (set ANTHROPIC_API_KEY)',
    );
  });
});
