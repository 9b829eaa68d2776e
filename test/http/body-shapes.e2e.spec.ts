import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';

// A body's shape is bounded before it is parsed. A $0-cap sub-account's 500,000-key object to /v1/embeddings used
// to be parsed, checked, validated and copied for seconds before the hold refused it with a 402, holding every
// other tenant's requests meanwhile; now it is a 400 naming the limit, from a scan of the raw bytes.
let gateway: TestGateway;
let mainKey: string;
let zeroCapKey: string;
let accountId: string;

beforeAll(async () => {
  gateway = await startTestGateway();
  const account = await json(await gateway.admin('/accounts', { name: 'shapes' }));
  mainKey = account.key;
  accountId = account.account_id;
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 1000, reference: 'funding' });
  const sub = await fetch(`${gateway.url}/v1/sub-accounts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${mainKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'zero cap', spend_cap_cents: 0 }),
  });
  zeroCapKey = (await json(sub)).key;
});
afterAll(async () => {
  await gateway?.close();
});

const post = (path: string, key: string, body: string) =>
  fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body,
  });

/** `"k0":0,"k1":0,...`: the members of a wide object, as text (building the object would take longer). */
const members = (count: number) => Array.from({ length: count }, (_, i) => `"k${i}":0`).join(',');
const zeros = (count: number) => `[${'0,'.repeat(count - 1)}0]`;

const refusal = (message: string, param?: string) => ({
  status: 400,
  body: {
    error: { message, type: 'invalid_request_error', param: param ?? null, code: 400 },
  },
});
const answer = async (response: Response) => ({ status: response.status, body: await json(response) });

describe('a body past the shape limits', () => {
  it('is a 400 naming the limit for a 500,000-key object, not the 402 the hold would give', async () => {
    const body = `{"model":"local/embed","input":"hello",${members(500_000)}}`;
    expect(await answer(await post('/v1/embeddings', zeroCapKey, body))).toEqual(
      refusal('Invalid body: body: more than 10000 keys in one object; the limit is 10000'),
    );
  });

  it('is a 400 naming the field for a 5,000,000-element array', async () => {
    const body = `{"model":"local/embed","input":${zeros(5_000_000)}}`;
    expect(await answer(await post('/v1/embeddings', zeroCapKey, body))).toEqual(
      refusal("Invalid body: 'input': more than 50000 elements in one array; the limit is 50000", 'input'),
    );
  });

  it('names the path of a nested wide object', async () => {
    const body = `{"model":"local/echo","messages":[{"role":"user","content":"hi"}],"metadata":{"x":{${members(10_001)}}}}`;
    expect(await answer(await post('/v1/chat/completions', zeroCapKey, body))).toEqual(
      refusal(
        "Invalid body: 'metadata.x': more than 10000 keys in one object; the limit is 10000",
        'metadata.x',
      ),
    );
  });

  it('counts the values of many medium arrays together', async () => {
    const arrays = Array.from({ length: 5 }, (_, i) => `"a${i}":${zeros(50_000)}`).join(',');
    const body = `{"model":"local/embed","input":"hello",${arrays}}`;
    expect(await answer(await post('/v1/embeddings', zeroCapKey, body))).toEqual(
      refusal('Invalid body: body: more than 100000 values in all; the limit is 100000'),
    );
  });

  it('is refused on the admin routes too', async () => {
    const response = await fetch(`${gateway.url}/admin/accounts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gateway.adminToken}`, 'content-type': 'application/json' },
      body: `{"name":"wide",${members(20_000)}}`,
    });
    expect(await answer(response)).toEqual(
      refusal('Invalid body: body: more than 10000 keys in one object; the limit is 10000'),
    );
  });

  it('is refused by the MCP endpoint, in JSON-RPC, before its SDK parses it', async () => {
    const response = await fetch(`${gateway.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${zeroCapKey}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"},"pad":${zeros(200_001)}}}`,
    });
    expect(await answer(response)).toEqual({
      status: 400,
      body: {
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32000,
          message: "Invalid body: 'params.pad': more than 50000 elements in one array; the limit is 50000",
        },
      },
    });
  });
});

describe('the built-in embedding model keeps the input limits of OpenAI’s', () => {
  it('refuses an input over 8,192 tokens, and inputs over 300,000 tokens in all, charging nothing', async () => {
    const charged = async () =>
      (
        await json(
          await fetch(`${gateway.url}/admin/accounts/${accountId}/balance`, {
            headers: { authorization: `Bearer ${gateway.adminToken}` },
          }),
        )
      ).charged_cents;
    const before = await charged();
    const embed = (input: unknown) =>
      post('/v1/embeddings', mainKey, JSON.stringify({ model: 'local/embed', input }));
    const refused = refusal(
      "'input': local/embed takes at most 8192 tokens per input and 300000 in all",
      'input',
    );
    // " word" is one token: 9,000 of them are one input past the limit; 40 inputs of 8,000 are 320,000 in all.
    expect(await answer(await embed(' word'.repeat(9_000)))).toEqual(refused);
    expect(await answer(await embed(Array.from({ length: 40 }, () => ' word'.repeat(8_000))))).toEqual(
      refused,
    );
    // Refused after its hold: the hold is released and nothing is charged.
    expect(await charged()).toBe(before);
    // At the limit it is served.
    const atLimit = await embed(' word'.repeat(8_192));
    expect(atLimit.status).toBe(200);
    expect((await json(atLimit)).usage.prompt_tokens).toBe(8_192);
  });
});

describe('the largest shapes the API takes', () => {
  it('are served: 2,048 embedding inputs, 5,000 messages, a 1,000-key JSON schema', async () => {
    const inputs = Array.from({ length: 2048 }, (_, i) => `text ${i}`);
    const embeddings = await post(
      '/v1/embeddings',
      mainKey,
      JSON.stringify({ model: 'local/embed', input: inputs }),
    );
    expect(embeddings.status).toBe(200);
    expect((await json(embeddings)).data).toHaveLength(2048);

    const messages = Array.from({ length: 5000 }, (_, i) => ({
      role: i % 2 ? 'assistant' : 'user',
      content: `m${i}`,
    }));
    const properties = Object.fromEntries(
      Array.from({ length: 1000 }, (_, i) => [`field_${i}`, { type: 'string' }]),
    );
    const chat = await post(
      '/v1/chat/completions',
      mainKey,
      JSON.stringify({
        model: 'local/echo',
        max_tokens: 16,
        messages,
        tools: [{ type: 'function', function: { name: 'wide', parameters: { type: 'object', properties } } }],
      }),
    );
    expect(chat.status).toBe(200);
  });
});
