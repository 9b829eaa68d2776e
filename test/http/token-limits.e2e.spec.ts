import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';

// Tokens per minute (issue 32): one gateway, its in-process limiter on a clock that stands still unless the test
// moves it, so every bucket's level is exact.
let gateway: TestGateway;
let now = Date.parse('2026-03-10T12:00:00Z');
let accountId: string;
let main: string;

const sdk = (key: string, maxRetries = 0) =>
  new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries });

const v1 = (method: string, path: string, key: string, body?: unknown) =>
  fetch(`${gateway.url}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });

async function subAccount(settings: Record<string, unknown>) {
  return json(await v1('POST', '/sub-accounts', main, { spend_cap_cents: 1000, ...settings }));
}

const ask = (text: string, maxTokens: number): OpenAI.ChatCompletionCreateParamsNonStreaming => ({
  model: 'local/echo',
  max_tokens: maxTokens,
  messages: [{ role: 'user', content: text }],
});

/** A 429 as the SDK raises it. */
async function refusal(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OpenAI.RateLimitError);
  return error as InstanceType<typeof OpenAI.APIError>;
}

const tokenHeaders = (headers: Headers) => ({
  limit: headers.get('x-ratelimit-limit-tokens'),
  remaining: Number(headers.get('x-ratelimit-remaining-tokens')),
  reset: headers.get('x-ratelimit-reset-tokens'),
});

const hellos = (n: number) => Array.from({ length: n }, () => 'hello').join(' ');

beforeAll(async () => {
  gateway = await startTestGateway({}, { clock: () => new Date(now) });
  ({ account_id: accountId, key: main } = await json(await gateway.admin('/accounts', { name: 'tpm' })));
  await gateway.admin(`/accounts/${accountId}/top-ups`, { cents: 5000, reference: 'funding' });
});
afterAll(async () => {
  await gateway?.close();
});

describe('tokens per minute', () => {
  let customer: { id: string; key: string };

  it('refuses a request larger than the whole minute with 429, saying so, and takes nothing for it', async () => {
    customer = await subAccount({ name: 'one thousand a minute', rate_limit_tpm: 1000 });
    const refused = await refusal(sdk(customer.key).chat.completions.create(ask('hi there', 2000)));
    expect(refused.status).toBe(429);
    expect(refused.type).toBe('rate_limit_error');
    expect(refused.message).toMatch(
      /Request too large for this sub-account on tokens per min \(TPM\): Limit 1000, Requested 20\d\d\./,
    );
    // Waiting never helps: no Retry-After, and the SDKs are told not to retry.
    expect(refused.headers?.get('retry-after')).toBeNull();
    expect(refused.headers?.get('x-should-retry')).toBe('false');
    expect(refused.headers?.get('x-ratelimit-limit-tokens')).toBe('1000');
  });

  it('counts each request at its worst case when admitted, trues it up by its usage, and refuses once the minute is used', async () => {
    const client = sdk(customer.key);
    // A fresh bucket of 1,000 (nothing was taken by the refusal above), less input + max_tokens.
    const first = await client.chat.completions.create(ask('hi there', 600)).withResponse();
    const input = first.data.usage?.prompt_tokens as number;
    const worst = input + 600;
    const firstUsed = first.data.usage?.total_tokens as number;
    expect(tokenHeaders(first.response.headers)).toEqual({
      limit: '1000',
      remaining: 1000 - worst,
      // Full again once what was taken has refilled, at 1,000 a minute.
      reset: `${(worst * 60) / 1000}s`,
    });

    // Without the true-up about 390 would be left, too few for another 609: the short answer gave back the
    // tokens it did not use. A stream is trued up at its end.
    const stream = await client.chat.completions
      .create({ ...ask('hi there', 600), stream: true, stream_options: { include_usage: true } })
      .withResponse();
    expect(tokenHeaders(stream.response.headers).remaining).toBe(1000 - firstUsed - worst);
    let streamUsed = 0;
    for await (const chunk of stream.data) if (chunk.usage) streamUsed = chunk.usage.total_tokens;
    expect(streamUsed).toBe(firstUsed);

    // A long answer uses nearly all it was admitted for.
    const long = await client.chat.completions.create(ask(hellos(250), 250));
    const longUsed = long.usage?.total_tokens as number;
    expect(long.usage?.completion_tokens).toBe(250);
    const left = 1000 - firstUsed - streamUsed - longUsed;
    expect(left).toBeLessThan(worst);

    // The next short request would use a few tokens, but is counted at its worst case, which no longer fits.
    const refused = await refusal(client.chat.completions.create(ask('hi there', 600)));
    const retryAfter = Math.ceil(((worst - left) * 60) / 1000);
    expect(refused.message).toBe(
      `429 Rate limit of 1000 tokens per minute reached for this sub-account: requested ${worst}, remaining ${left}; retry in ${retryAfter} s`,
    );
    expect(refused.headers?.get('retry-after')).toBe(String(retryAfter));
    expect(tokenHeaders(refused.headers as Headers)).toMatchObject({ limit: '1000', remaining: left });

    // Retry-After is when enough has refilled for this very request.
    now += retryAfter * 1000 - 1000;
    await refusal(client.chat.completions.create(ask('hi there', 600)));
    now += 1000;
    const admitted = await client.chat.completions.create(ask('hi there', 600)).withResponse();
    const level = left + (retryAfter * 1000) / 60 - worst;
    expect(tokenHeaders(admitted.response.headers).remaining).toBe(Math.floor(level + 1e-9));
  });

  it('counts embeddings by their input tokens, trued up by what the provider reports', async () => {
    const embedder = await subAccount({ name: 'embedder', rate_limit_tpm: 1000 });
    const client = sdk(embedder.key);
    // Not served from the cache, which would reach no provider and count no tokens.
    const body = { model: 'local/embed', input: 'tokens per minute, for embeddings too', cache: 'skip' };
    const first = await client.embeddings.create(body as OpenAI.EmbeddingCreateParams).withResponse();
    const used = first.data.usage.prompt_tokens;
    const firstHeaders = tokenHeaders(first.response.headers);
    expect(firstHeaders.limit).toBe('1000');
    // Admitted at the hold's worst case (a margin above the gateway's count), which is more than was used.
    const worst = 1000 - firstHeaders.remaining;
    expect(worst).toBeGreaterThan(used);
    const second = await client.embeddings.create(body as OpenAI.EmbeddingCreateParams).withResponse();
    expect(tokenHeaders(second.response.headers).remaining).toBe(1000 - used - worst);
  });

  it("caps sub-accounts by the account's own limit, and counts all the account's tokens in one bucket", async () => {
    const update = ['accounts', 'update', '--account', accountId, '--rate-limit-tpm', '500'];
    const updated = await runCli(update, gateway.env);
    expect(updated.json).toEqual({ account_id: accountId, rate_limit_tpm: 500 });
    // At use: a sub-account's own limit above the account's new one is shown, and applied, as the account's.
    expect((await json(await v1('GET', `/sub-accounts/${customer.id}`, main))).rate_limit_tpm).toBe(500);
    const tooLarge = await refusal(sdk(customer.key).chat.completions.create(ask('hi there', 600)));
    expect(tooLarge.message).toMatch(/for this sub-account on tokens per min \(TPM\): Limit 500, Requested/);
    // At creation and update: stored capped.
    const capped = await subAccount({ name: 'capped', rate_limit_tpm: 2000 });
    expect(capped.rate_limit_tpm).toBe(500);
    const patched = await json(
      await v1('PATCH', `/sub-accounts/${capped.id}`, main, { rate_limit_tpm: 100 }),
    );
    expect(patched.rate_limit_tpm).toBe(100);

    // The account's own keys and a sub-account without a limit of its own share the account's 500.
    const reseller = await sdk(main)
      .chat.completions.create(ask(hellos(150), 150))
      .withResponse();
    const resellerWorst = (reseller.data.usage?.prompt_tokens as number) + 150;
    expect(tokenHeaders(reseller.response.headers)).toMatchObject({
      limit: '500',
      remaining: 500 - resellerWorst,
    });
    const left = 500 - (reseller.data.usage?.total_tokens as number);
    const unlimited = await subAccount({ name: 'no limit of its own' });
    expect(unlimited.rate_limit_tpm).toBeNull();
    const refused = await refusal(sdk(unlimited.key).chat.completions.create(ask('hi there', 300)));
    expect(refused.message).toContain('Rate limit of 500 tokens per minute reached for this account');
    expect(tokenHeaders(refused.headers as Headers)).toMatchObject({ limit: '500', remaining: left });

    // Lifted: the sub-account's own limit is back, and a request without any limit carries no token headers.
    const lifted = await gateway.admin(`/accounts/${accountId}/settings`, { rate_limit_tpm: null });
    expect(await json(lifted)).toEqual({ account_id: accountId, rate_limit_tpm: null });
    expect((await json(await v1('GET', `/sub-accounts/${customer.id}`, main))).rate_limit_tpm).toBe(1000);
    const free = await sdk(unlimited.key).chat.completions.create(ask('hi there', 300)).withResponse();
    expect(free.response.headers.get('x-ratelimit-limit-tokens')).toBeNull();
  });

  it('refuses a bad account limit by name', async () => {
    for (const bad of [0, 1.5, 'many']) {
      const response = await gateway.admin(`/accounts/${accountId}/settings`, { rate_limit_tpm: bad });
      expect(response.status).toBe(400);
      expect((await json(response)).error.message).toContain('rate_limit_tpm');
    }
  });
});
