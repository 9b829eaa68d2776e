import { request as httpRequest } from 'node:http';
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type Json, json } from '../support/json.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { Upstream } from '../upstreams/types.ts';

let openai: Upstream;
let gateway: TestGateway;
let accountId: string;
let mainKey: string;
let subKey: string;
let subAccountId: string;
/** A chat completion made through the MCP server, as a replay's source. */
let loggedChatId: string;
const clients: Client[] = [];
const FUNDED_CENTS = 1000;

/** The SDK's own client over Streamable HTTP; `modern` speaks the current revision, else the 2025 one. */
async function connect(key: string, modern = true): Promise<Client> {
  const client = new Client(
    { name: 'e2e', version: '1.0.0' },
    modern ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  clients.push(client);
  return client;
}

const v1 = (path: string, key: string, init: RequestInit = {}) =>
  fetch(`${gateway.url}/v1${path}`, {
    ...init,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...init.headers },
  });

/** A tool's structured content, failing with the tool's own text when it answered an error. */
async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Json> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
  return result.structuredContent;
}

const textOf = (result: Json): string => result.content.map((c: { text: string }) => c.text).join('\n');

beforeAll(async () => {
  openai = await startOpenAiUpstream();
  gateway = await startTestGateway({ OPENAI_API_KEY: 'sk-upstream', OPENAI_BASE_URL: `${openai.url}/v1` });
  const account = await json(await gateway.admin('/accounts', { name: 'agents' }));
  accountId = account.account_id;
  mainKey = account.key;
  await gateway.admin(`/accounts/${accountId}/top-ups`, { cents: FUNDED_CENTS, reference: 'mcp-1' });
  const sub = await json(
    await v1('/sub-accounts', mainKey, {
      method: 'POST',
      body: JSON.stringify({ name: 'customer', spend_cap_cents: 500 }),
    }),
  );
  subAccountId = sub.id;
  subKey = sub.key;
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await gateway?.close();
  await openai?.close();
});

describe('the MCP server at /mcp, driven by the SDK client', () => {
  it('lists the model, catalog and read-only account tools with JSON schemas, and no write tools', async () => {
    const client = await connect(mainKey);
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'chat',
        'embed',
        'generate_image',
        'transcribe',
        'speak',
        'translate',
        'classify',
        'moderate',
        'rerank',
        'ocr',
        'list_models',
        'get_model',
        'get_balance',
        'get_usage',
        'list_requests',
        'get_request',
        'list_jobs',
        'get_job',
        'get_replay',
      ]),
    );
    for (const write of ['create_sub_account', 'set_budget', 'start_job', 'start_replay', 'start_eval']) {
      expect(names).not.toContain(write);
    }
    expect(names).toContain('get_eval');
    const chat = tools.find((t) => t.name === 'chat');
    expect(chat?.inputSchema).toMatchObject({
      type: 'object',
      properties: { model: { type: 'string', default: 'auto' }, prompt: { type: 'string' } },
    });
    expect(chat?.annotations).toMatchObject({ readOnlyHint: false });
    expect(tools.find((t) => t.name === 'get_balance')?.annotations).toMatchObject({ readOnlyHint: true });
  });

  it('chats with a local model and a provider, charges it like the HTTP API and logs the call', async () => {
    const client = await connect(mainKey);
    // The baseline once the balance read model shows the funding: read before it folded the top-up, the baseline
    // would be 0 and the balance, charged from 1,000 cents, would never come down to the expected figure.
    const before = await eventually(
      async () => json(await v1('/balance', mainKey)),
      (b) => b.cents === FUNDED_CENTS,
      3000,
    );

    const local = await call(client, 'chat', { model: 'local/echo', prompt: 'Bonjour, agent' });
    expect(local).toMatchObject({
      model: 'local/echo',
      provider: 'local',
      request_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(local.text).toContain('Bonjour, agent');

    const remote = await call(client, 'chat', {
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'Say hello' }],
      system: 'Be brief',
      max_tokens: 32,
      tag: 'agent-tag',
    });
    expect(remote).toMatchObject({ model: 'openai/gpt-4o-mini', provider: 'openai', finish_reason: 'stop' });
    expect(remote.text.length).toBeGreaterThan(0);
    expect(remote.cost_cents).toBeGreaterThan(0);
    loggedChatId = remote.request_id;
    // The provider got the request as the HTTP route sends it: the system message first.
    const sent = openai.requests.at(-1)?.body as Json;
    expect(sent.messages[0]).toEqual({ role: 'system', content: 'Be brief' });

    // The balance shows whole cents, rounded down, from its read model (caught up a moment later).
    const expected = Math.floor(before.cents - local.cost_cents - remote.cost_cents);
    const after = await eventually(
      async () => json(await v1('/balance', mainKey)),
      (b) => b.cents === expected,
      3000,
    );
    expect(after.cents).toBe(expected);
    expect(after.cents).toBeLessThan(before.cents);

    const logged = await eventually(
      async () => json(await v1(`/requests/${remote.request_id}`, mainKey)),
      (r) => r.id === remote.request_id,
      3000,
    );
    expect(logged).toMatchObject({
      endpoint: '/v1/chat/completions',
      model: 'openai/gpt-4o-mini',
      status: 200,
      tag: 'agent-tag',
      // The gateway's id is the request's; `mcp-…`, the twin's own X-Request-Id, tells MCP calls apart.
      client_request_id: expect.stringMatching(/^mcp-/),
    });
    const listed = await call(client, 'list_requests', { tag: 'agent-tag' });
    expect(listed.data.map((r: Json) => r.id)).toContain(remote.request_id);
    const one = await call(client, 'get_request', { id: remote.request_id });
    expect(one).toMatchObject({ id: remote.request_id, status: 200 });
  });

  it('embeds, moderates, translates and classifies through the same twins', async () => {
    const client = await connect(mainKey);
    const embedded = await call(client, 'embed', { model: 'local/embed', input: ['the cat', 'a dog'] });
    expect(embedded.embeddings).toHaveLength(2);
    expect(embedded.embeddings[0]).toHaveLength(1536);
    expect(embedded).toMatchObject({
      model: 'local/embed',
      request_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    const moderated = await call(client, 'moderate', {
      model: 'local/moderation',
      input: 'a friendly hello',
    });
    expect(moderated.results[0].flagged).toBe(false);
    const translated = await call(client, 'translate', {
      model: 'local/echo',
      text: 'hello',
      target_lang: 'de',
    });
    expect(translated).toMatchObject({ object: 'translation', model: 'local/echo', target_lang: 'de' });
    const classified = await call(client, 'classify', {
      model: 'local/echo',
      input: 'I love it',
      labels: ['positive', 'negative'],
    });
    expect(classified.model).toBe('local/echo');
  });

  it('reads the catalog with prices and filters, and one model', async () => {
    const client = await connect(mainKey);
    const chats = await call(client, 'list_models', { provider: 'openai', modality: 'text' });
    expect(chats.total).toBeGreaterThan(0);
    expect(chats.data.every((m: Json) => m.id.startsWith('openai/'))).toBe(true);
    const mini = chats.data.find((m: Json) => m.id === 'openai/gpt-4o-mini');
    expect(mini.pricing).toBeDefined();
    const vision = await call(client, 'list_models', { capability: 'vision', limit: 5 });
    expect(vision.data.length).toBeLessThanOrEqual(5);
    expect(vision.data.every((m: Json) => m.capabilities.includes('vision'))).toBe(true);
    const model = await call(client, 'get_model', { id: 'openai/gpt-4o-mini' });
    expect(model).toMatchObject({
      id: 'openai/gpt-4o-mini',
      schema: { endpoint: { path: '/v1/chat/completions' } },
    });

    const missing = await client.callTool({ name: 'get_model', arguments: { id: 'openai/no-such-model' } });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(/^HTTP 404 .*no-such-model/);
  });

  it('takes a model id as one path segment, so an id cannot reach another route', async () => {
    const client = await connect(mainKey);
    for (const id of [
      '../../v1/webhook-secret',
      '../requests',
      '../balance',
      '..',
      '.',
      'openai/../../balance',
    ]) {
      const answer = await client.callTool({ name: 'get_model', arguments: { id } });
      expect(answer.isError, id).toBe(true);
      expect(textOf(answer), id).toMatch(/^HTTP 404 \(model_not_found\): The model '.*' does not exist/);
    }
    for (const uri of [
      'models://../balance',
      'models://../../v1/webhook-secret',
      'models://..',
      'models://%2E%2E',
    ]) {
      const missing = await client.readResource({ uri }).catch((e: unknown) => e);
      expect(missing, uri).toBeInstanceOf(ProtocolError);
      expect((missing as ProtocolError).data, uri).toMatchObject({ uri });
    }
  });

  it('reads the balance and the usage by tag, by sub-account and by model', async () => {
    const client = await connect(mainKey);
    const http = await json(await v1('/balance', mainKey));
    expect(await call(client, 'get_balance')).toEqual(http);

    // Usage comes from read models, caught up a moment after the charge.
    const byTag = await eventually(
      () => call(client, 'get_usage', { by: 'tag' }),
      (usage) => usage.data.some((row: Json) => row.tag === 'agent-tag'),
      3000,
    );
    expect(byTag.data).toEqual(
      expect.arrayContaining([expect.objectContaining({ tag: 'agent-tag', requests: 1 })]),
    );
    expect(byTag).toEqual(await json(await v1('/usage/by-tag', mainKey)));
    const byModel = await eventually(
      () => call(client, 'get_usage', { by: 'model' }),
      (usage) => usage.data.some((row: Json) => row.model === 'openai/gpt-4o-mini'),
      3000,
    );
    expect(byModel.data).toEqual(
      expect.arrayContaining([expect.objectContaining({ model: 'openai/gpt-4o-mini', requests: 1 })]),
    );
    const bySub = await call(client, 'get_usage', { by: 'sub_account', month: byTag.month });
    expect(bySub.month).toBe(byTag.month);
  });

  it("lists the account's keys and a sub-account's, never the keys themselves", async () => {
    const client = await connect(mainKey);
    const own = await call(client, 'list_keys');
    expect(own).toEqual(await json(await v1('/keys', mainKey)));
    expect(own.data.map((k: Json) => k.name)).toEqual(['default']);
    const customer = await call(client, 'list_keys', { sub_account_id: subAccountId });
    expect(customer.data).toEqual([
      expect.objectContaining({ name: 'default', sub_account_id: subAccountId }),
    ]);
    expect(JSON.stringify([own, customer])).not.toMatch(/sk-gw-[A-Za-z0-9_-]{43}/);
    const tools = (await (await connect(subKey)).listTools()).tools.map((t) => t.name);
    expect(tools).not.toContain('list_keys');
  });

  it('serves a sub-account key its own balance, usage and requests only', async () => {
    const sub = await connect(subKey);
    const answer = await call(sub, 'chat', {
      model: 'openai/gpt-4o-mini',
      prompt: 'from the customer',
      tag: 'cust',
    });
    const balance = await eventually(
      () => call(sub, 'get_balance'),
      (b) => b.cents < 500,
      3000,
    );
    expect(balance.cents).toBe(Math.floor(500 - answer.cost_cents));
    expect(balance).toEqual(await json(await v1('/balance', subKey)));

    const own = await eventually(
      () => call(sub, 'list_requests'),
      (page) => page.data.length > 0,
      3000,
    );
    expect(own.data.map((r: Json) => r.id)).toEqual([answer.request_id]);
    const usage = await eventually(
      () => call(sub, 'get_usage', { by: 'tag' }),
      (u) => u.data.length > 0,
      3000,
    );
    expect(usage.data.map((row: Json) => row.tag)).toEqual(['cust']);
    const bySub = await call(sub, 'get_usage', { by: 'sub_account' });
    expect(bySub.data.map((row: Json) => row.sub_account_id)).toEqual([subAccountId]);

    // The main key's requests are not the sub-account's to read.
    const main = await connect(mainKey);
    const mainOnly = (await call(main, 'list_requests', { tag: 'agent-tag' })).data[0];
    const refused = await sub.callTool({ name: 'get_request', arguments: { id: mainOnly.id } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^HTTP 404/);
  });

  it('gives a key at its cap a tool error carrying the 402 the HTTP API answers', async () => {
    const capped = await json(
      await v1('/sub-accounts', mainKey, {
        method: 'POST',
        body: JSON.stringify({ name: 'capped', spend_cap_cents: 0 }),
      }),
    );
    const http = await v1('/chat/completions', capped.key, {
      method: 'POST',
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(http.status).toBe(402);
    const { error } = await json(http);

    const client = await connect(capped.key);
    const result = await client.callTool({
      name: 'chat',
      arguments: { model: 'openai/gpt-4o-mini', prompt: 'hi' },
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(`HTTP 402 (${error.type}): ${error.message}`);
    expect(result.structuredContent).toEqual({ error });
  });

  it('refuses a key over its rate limit with a tool error carrying the 429 and when to retry', async () => {
    const account = await json(await gateway.admin('/accounts', { name: 'hasty agent' }));
    await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 100, reference: 'hasty' });
    await gateway.admin(`/accounts/${account.account_id}/settings`, { rate_limit_rpm: 1 });
    const client = await connect(account.key);
    await call(client, 'chat', { model: 'local/echo', prompt: 'one' });
    const second = await client.callTool({ name: 'chat', arguments: { model: 'local/echo', prompt: 'two' } });
    expect(second.isError).toBe(true);
    expect(textOf(second)).toMatch(
      /^HTTP 429 \(rate_limit\w*\): Rate limit of 1 requests per minute .*\(retry after \d+ s\)$/,
    );
  });

  it('names the field of bad arguments in a tool error, and answers an unknown tool with method-not-found', async () => {
    const client = await connect(mainKey);
    const bad = await client.callTool({ name: 'chat', arguments: { messages: 'hello' } });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toContain("'messages'");
    const neither = await client.callTool({ name: 'chat', arguments: {} });
    expect(textOf(neither)).toContain("'prompt'");
    const badMonth = await client.callTool({ name: 'get_usage', arguments: { month: '2026-13' } });
    expect(textOf(badMonth)).toContain("'month'");

    const unknown = await client.callTool({ name: 'no_such_tool', arguments: {} }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(ProtocolError);
    expect((unknown as ProtocolError).code).toBe(-32601);
    // A write tool is unknown while the account has them off.
    const write = await client
      .callTool({ name: 'set_budget', arguments: { tag: 'x', cap_cents: 1 } })
      .catch((e: unknown) => e);
    expect((write as ProtocolError).code).toBe(-32601);
  });

  it('offers write tools once the operator turns them on, and main-key tools only to main keys', async () => {
    const on = await gateway.admin(`/accounts/${accountId}/settings`, { mcp_write_tools: true });
    expect(on.status).toBe(200);
    const main = await connect(mainKey);
    const names = (await main.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(['create_sub_account', 'set_budget', 'start_job', 'start_eval', 'start_replay']),
    );
    const budget = await call(main, 'set_budget', { tag: 'agents', cap_cents: 250 });
    expect(budget).toMatchObject({ object: 'budget', tag: 'agents', cap_cents: 250 });
    const created = await call(main, 'create_sub_account', { name: 'made by an agent', spend_cap_cents: 10 });
    expect(created).toMatchObject({ name: 'made by an agent', key: expect.stringMatching(/^sk-gw-/) });
    const started = await call(main, 'start_eval', {
      name: 'echoes',
      candidate_models: ['local/echo', 'local/echo-pro'],
      dataset: [{ input: 'ping', expected: 'ping' }],
      metric: 'cost',
    });
    expect(started).toMatchObject({ object: 'eval', name: 'echoes', metric: 'cost' });
    expect(await call(main, 'get_eval', { id: started.id })).toMatchObject({
      id: started.id,
      object: 'eval',
    });

    // A replay of a request the agent made; its source's bodies are stored in the background, hence the retries.
    const replay = await eventually(
      () =>
        main.callTool({
          name: 'start_replay',
          arguments: { source_request_id: loggedChatId, target_model: 'local/echo' },
        }),
      (result) => !result.isError,
      3000,
    );
    const replayed = replay.structuredContent as Json;
    expect(replayed).toMatchObject({ source_request_id: loggedChatId, target_model: 'local/echo' });
    expect(await call(main, 'get_replay', { id: replayed.id })).toMatchObject({ id: replayed.id });

    const sub = await connect(subKey);
    const subNames = (await sub.listTools()).tools.map((t) => t.name);
    expect(subNames).toEqual(expect.arrayContaining(['start_job', 'start_replay']));
    expect(subNames).not.toContain('create_sub_account');
    expect(subNames).not.toContain('set_budget');

    const cli = await runCli(
      ['accounts', 'update', '--account', accountId, '--mcp-write-tools', 'off'],
      gateway.env,
    );
    expect(cli.code, cli.stderr).toBe(0);
    const off = (await (await connect(mainKey)).listTools()).tools.map((t) => t.name);
    expect(off).not.toContain('set_budget');
    // Each switch is an event of the account's stream.
    const events = await gateway.runtime.store.readStream(`account-${accountId}`);
    const switches = events
      .filter((e) => e.type === 'AccountSettingsChanged')
      .map((e) => (e.data as { mcpWriteTools?: boolean }).mcpWriteTools);
    expect(switches).toEqual([true, false]);
  });

  it('reads the catalog and the usage summary as resources', async () => {
    const client = await connect(mainKey);
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(['models://catalog', 'usage://summary']);
    const catalog = await client.readResource({ uri: 'models://catalog' });
    const list = JSON.parse((catalog.contents[0] as { text: string }).text);
    expect(list.data.some((m: Json) => m.id === 'openai/gpt-4o-mini')).toBe(true);
    const one = await client.readResource({ uri: 'models://openai/gpt-4o-mini' });
    expect(JSON.parse((one.contents[0] as { text: string }).text).id).toBe('openai/gpt-4o-mini');
    const usage = await client.readResource({ uri: 'usage://summary' });
    const summary = JSON.parse((usage.contents[0] as { text: string }).text);
    expect(summary).toMatchObject({ balance: await json(await v1('/balance', mainKey)) });
    expect(summary.by_tag.map((row: Json) => row.tag)).toContain('agent-tag');
    const missing = await client
      .readResource({ uri: 'models://openai/no-such-model' })
      .catch((e: unknown) => e);
    // The current revision's resource-not-found is -32602 with the URI in its data.
    expect(missing).toBeInstanceOf(ProtocolError);
    expect((missing as ProtocolError).data).toMatchObject({ uri: 'models://openai/no-such-model' });
  });

  it('serves clients of the 2025 revision too (stateless)', async () => {
    const client = await connect(mainKey, false);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('chat');
    expect(await call(client, 'chat', { model: 'local/echo', prompt: 'legacy' })).toMatchObject({
      model: 'local/echo',
    });
  });

  it('shows GATEWAY_MCP_URL in /v1/capabilities', async () => {
    const capabilities = await json(await v1('/capabilities', mainKey));
    expect(capabilities.mcp_url).toBe(`${gateway.url}/mcp`);
  });
});

describe('the MCP endpoint over plain HTTP', () => {
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  };
  const post = (headers: Record<string, string>, body: unknown = initialize) =>
    fetch(`${gateway.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body: JSON.stringify(body),
    });

  it('answers 401 with a Bearer challenge without a key or with a wrong one', async () => {
    const none = await post({});
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="model-gateway"');
    expect((await json(none)).error.message).toMatch(/Missing API key/);
    const wrong = await post({ authorization: 'Bearer sk-gw-not-a-real-key-at-all-000000000000' });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toMatch(
      /^Bearer realm="model-gateway", error="invalid_token"/,
    );
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await expect(
      client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`))),
    ).rejects.toThrow();
  });

  it('refuses a foreign Origin or Host (DNS rebinding) with 403', async () => {
    const origin = await post({ authorization: `Bearer ${mainKey}`, origin: 'http://evil.example' });
    expect(origin.status).toBe(403);
    const host = await new Promise<number>((resolve, reject) => {
      const url = new URL(`${gateway.url}/mcp`);
      const req = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          path: '/mcp',
          method: 'POST',
          headers: {
            host: 'evil.example',
            authorization: `Bearer ${mainKey}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(initialize));
    });
    expect(host).toBe(403);
    expect((await post({ authorization: `Bearer ${mainKey}`, origin: gateway.url })).status).toBe(200);
  });

  it('answers GET and DELETE (the 2025 session operations) 405, and a body over the limit 413, in JSON-RPC', async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(`${gateway.url}/mcp`, {
        method,
        headers: { authorization: `Bearer ${mainKey}`, accept: 'application/json, text/event-stream' },
      });
      expect(response.status).toBe(405);
      expect(await json(response)).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) } });
    }
    const huge = await post(
      { authorization: `Bearer ${mainKey}` },
      { ...initialize, pad: 'x'.repeat(11 * 1024 * 1024) },
    );
    expect(huge.status).toBe(413);
    expect(await json(huge)).toMatchObject({ jsonrpc: '2.0', error: { message: expect.any(String) } });
  });

  it('answers a body that is not JSON-RPC in JSON-RPC', async () => {
    const response = await fetch(`${gateway.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${mainKey}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: '{not json',
    });
    expect(response.status).toBe(400);
    expect(await json(response)).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });
  });
});
