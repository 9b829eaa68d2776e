import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { cacheStream } from '../../events/cache.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { startOpenAiModalitiesUpstream } from '../upstreams/openai-modalities.ts';
import type { Upstream } from '../upstreams/types.ts';

// Two gateways over one store (and, for the Redis case, one Redis): entries one stores the other serves, and a purge
// on one is seen by the other at its next lookup.
describe.each(['postgres', 'redis'] as const)('purging the cache, entries in %s', (where) => {
  let embeddings: Upstream;
  let one: TestGateway;
  let two: TestGateway;
  let accountId: string;
  let main: string;

  const chat = async (gateway: TestGateway, key: string, content: string, cache = 'auto') => {
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'local/echo',
        temperature: 0,
        cache,
        messages: [{ role: 'user', content }],
      }),
    });
    expect(response.status).toBe(200);
    return response.headers.get('x-cache-status');
  };
  const purge = async (gateway: TestGateway, key: string) => {
    const response = await fetch(`${gateway.url}/v1/cache`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${key}` },
    });
    expect(response.status).toBe(200);
    return json(response);
  };
  const subAccount = async (name: string) =>
    json(
      await fetch(`${one.url}/v1/sub-accounts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${main}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name, spend_cap_cents: 100 }),
      }),
    );

  beforeAll(async () => {
    embeddings = await startOpenAiModalitiesUpstream();
    const env = {
      OPENAI_API_KEY: 'sk-upstream',
      OPENAI_BASE_URL: `${embeddings.url}/v1`,
      GATEWAY_CACHE_EMBEDDING_MODEL: 'openai/text-embedding-3-large',
      ...(where === 'redis' && { REDIS_URL: inject('redisUrl') }),
    };
    one = await startTestGateway(env);
    two = await startTestGateway(env, { schema: one.env.GATEWAY_DB_SCHEMA });
    const account = await json(await one.admin('/accounts', { name: 'purged' }));
    accountId = account.account_id;
    main = account.key;
    await one.admin(`/accounts/${accountId}/top-ups`, { cents: 1000, reference: 'p' });
    // The second instance learns of the account and its keys through the log.
    await eventually(
      () => chat(two, main, 'warm up').catch(() => null),
      (status) => status !== null,
      3000,
    );
  });
  afterAll(async () => {
    await two?.close();
    await one?.close();
    await embeddings?.close();
  });

  it('a sub-account key drops only its own entries; the account key its own and its sub-accounts’', async () => {
    const first = await subAccount('first');
    const second = await subAccount('second');
    const other = await json(await one.admin('/accounts', { name: 'untouched' }));
    await one.admin(`/accounts/${other.account_id}/top-ups`, { cents: 100, reference: 'p' });
    const question = `Shared question ${randomBytes(4).toString('hex')}`;
    for (const key of [main, first.key, second.key, other.key])
      expect(await chat(one, key, question)).toBe('miss');
    await eventually(
      () => chat(two, second.key, question),
      (s) => s === 'hit; type=exact',
      3000,
    );
    for (const key of [main, first.key, second.key, other.key])
      expect(await chat(two, key, question)).toBe('hit; type=exact');

    expect(await purge(one, first.key)).toEqual({ object: 'cache.purge', scope: 'sub_account', deleted: 1 });
    expect(await chat(two, first.key, question)).toBe('miss');
    expect(await chat(two, second.key, question)).toBe('hit; type=exact');
    expect(await chat(two, main, question)).toBe('hit; type=exact');

    // first's entry is back (the miss above stored it): the account's purge takes it with the others, and the
    // account's own warm-up answer.
    expect(await purge(two, main)).toEqual({ object: 'cache.purge', scope: 'account', deleted: 4 });
    for (const key of [main, first.key, second.key]) expect(await chat(one, key, question)).toBe('miss');
    expect(await chat(one, other.key, question)).toBe('hit; type=exact');

    const events = await one.runtime.store.readStream(cacheStream(accountId));
    expect(events.map((e) => [e.type, (e.data as { entries: number }).entries])).toEqual([
      ['CachePurged', 1],
      ['CachePurged', 4],
    ]);
    expect(events[0]?.data).toMatchObject({ accountId, subAccountId: first.id });
    expect(events[1]?.data).toMatchObject({ accountId, subAccountId: null });
  });

  it('a purge reaches the other instance’s in-memory semantic index', async () => {
    const question = `What is the capital of Peru ${randomBytes(2).toString('hex')}?`;
    expect(await chat(one, main, question, 'semantic')).toBe('miss');
    const paraphrase = question.replace('What is the capital of', 'Tell me the capital of');
    expect(await chat(two, main, paraphrase, 'semantic')).toMatch(/^hit; type=semantic/);
    await purge(one, main);
    expect(await chat(two, main, paraphrase, 'semantic')).toBe('miss');
  });
});
