import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';

// Found by the route fuzzer (test/faults/fuzz.fault.spec.ts, FAULTS_SEED=7): a model named after a property of
// Object.prototype was looked up in a plain object of fallbacks and found a function there, a 500.
let gateway: TestGateway;
let key: string;

beforeAll(async () => {
  gateway = await startTestGateway();
  const account = await json(await gateway.admin('/accounts', { name: 'prototype names' }));
  key = account.key;
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 100, reference: 'funding' });
});
afterAll(async () => {
  await gateway?.close();
});

describe('a model named after an Object.prototype property', () => {
  it.each(['constructor', 'toString', '__proto__', 'hasOwnProperty'])(
    'is an unknown model (404) on chat completions and messages, not a 500: %s',
    async (model) => {
      for (const path of ['/v1/chat/completions', '/v1/messages']) {
        const response = await fetch(`${gateway.url}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model, max_tokens: 16, messages: [{ role: 'user', content: 'hello' }] }),
        });
        expect(response.status, `${path} ${model}`).toBe(404);
      }
    },
  );
});
