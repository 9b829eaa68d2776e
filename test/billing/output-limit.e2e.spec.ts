import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { Upstream } from '../upstreams/types.ts';

// Near a cap, a request without max_tokens was sent with whatever output limit the cap still paid for and came
// back cut (finish_reason "length") without a word. Now its 402 says what it asked for and what it can afford,
// and the limit is lowered only for a client that asks for it (x-gw-fit-output: true).

let openai: Upstream;
let gateway: TestGateway;
let main: string;

beforeAll(async () => {
  openai = await startOpenAiUpstream();
  gateway = await startTestGateway({ OPENAI_API_KEY: 'sk-upstream', OPENAI_BASE_URL: `${openai.url}/v1` });
  const account = await json(await gateway.admin('/accounts', { name: 'near a cap' }));
  main = account.key;
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 10_000, reference: 'funding' });
});
afterAll(async () => {
  await gateway?.close();
  await openai?.close();
});

const FIT = { headers: { 'x-gw-fit-output': 'true' } };
/** A sub-account's cap of 1 cent, in nano-dollars. */
const CENT = 10_000_000n;

const openAi = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });

async function capped(name: string): Promise<{ id: string; key: string }> {
  const response = await fetch(`${gateway.url}/v1/sub-accounts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${main}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, spend_cap_cents: 1 }),
  });
  return json(response);
}

/** `count` words the gateway counts at 2 or 3 tokens each, so a prompt's size is easy to steer. */
const words = (count: number) => Array.from({ length: count }, (_, i) => `word${i}`).join(' ');
/** 2,907 input tokens: local/echo-pro bills them $0.008721, leaving a 1-cent cap room for a few dozen more. */
const PROMPT = words(1_300);

/**
 * What a request costs, worked out by hand from docs/billing.md: each line's tokens × its price per million, then
 * the 5% fee, every rounding up.
 */
function charged(
  inputTokens: number,
  outputTokens: number,
  prices: { input: bigint; output: bigint },
): bigint {
  const lines =
    (BigInt(inputTokens) * prices.input + 999_999n) / 1_000_000n +
    (BigInt(outputTokens) * prices.output + 999_999n) / 1_000_000n;
  return lines + (lines * 5n + 99n) / 100n;
}

/** The most output tokens `capNanos` pays for beside the input. */
function affordable(
  inputTokens: number,
  capNanos: bigint,
  prices: { input: bigint; output: bigint },
): number {
  let output = 0;
  while (charged(inputTokens, output + 1, prices) <= capNanos) output++;
  return output;
}

const ECHO_PRO = { input: 3_000_000_000n, output: 15_000_000_000n };
const INSTRUCT = { input: 1_500_000_000n, output: 2_000_000_000n };

/** The gateway's count of `text` as one user message, as the hold counts it (local models bill that count). */
async function inputTokensOf(text: string): Promise<number> {
  const probe = await openAi(main).chat.completions.create({
    model: 'local/echo-pro',
    max_tokens: 1,
    messages: [{ role: 'user', content: text }],
  });
  return probe.usage?.prompt_tokens as number;
}

/** The refusal an SDK call was rejected with. */
async function refusal(call: Promise<unknown>): Promise<{ status: number; type: string; message: string }> {
  const error = await call.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(Error);
  const { status, error: body } = error as { status: number; error: { type?: string; message: string } };
  // The Anthropic SDK keeps Anthropic's envelope ({type: 'error', error: {type, message}}).
  const inner = (body as { error?: { type: string; message: string } }).error ?? body;
  return { status, type: inner.type ?? '', message: inner.message };
}

describe('a request whose output limit its cap cannot cover', () => {
  it('is refused with 402 naming the scope, the tokens asked for and what it can afford, on chat', async () => {
    const input = await inputTokensOf(PROMPT);
    const sub = await capped('chat');
    const canAfford = affordable(input, CENT, ECHO_PRO);
    expect(canAfford).toBeGreaterThan(0);
    expect(canAfford).toBeLessThan(8_192);
    const client = openAi(sub.key);
    const body = { model: 'local/echo-pro', messages: [{ role: 'user' as const, content: PROMPT }] };
    const refused = await refusal(client.chat.completions.create(body));
    expect(refused).toMatchObject({ status: 402, type: 'budget_exceeded' });
    expect(refused.message).toContain(`Spend cap of sub-account ${sub.id} reached: cap $0.01, spent $0.00;`);
    expect(refused.message).toContain(
      `this request needs up to $${(Number(charged(input, 8_192, ECHO_PRO)) / 1e9).toFixed(6)}.`,
    );
    expect(refused.message).toContain(
      `You requested up to 8192 output tokens, but can only afford ${canAfford}: ask for ${canAfford} or fewer, ` +
        'or send the header x-gw-fit-output: true',
    );
    // Streamed the same: refused before any byte.
    const streamed = await refusal(client.chat.completions.create({ ...body, stream: true }));
    expect(streamed.status).toBe(402);
    expect(streamed.message).toContain(`but can only afford ${canAfford}`);

    // Asked for: served with the limit the cap pays for, and cut there, as finish_reason says.
    const { data, response } = await client.chat.completions.create(body, FIT).withResponse();
    expect(data.choices[0]?.finish_reason).toBe('length');
    expect(data.usage).toMatchObject({ prompt_tokens: input, completion_tokens: canAfford });
    expect(Number(response.headers.get('x-cost-cents'))).toBeCloseTo(
      Number(charged(input, canAfford, ECHO_PRO)) / 1e7,
      7,
    );
  });

  it('with max_tokens given, is refused as before, with the same figures, and fitted only when asked', async () => {
    const sub = await capped('explicit');
    const client = openAi(sub.key);
    const input = await inputTokensOf('short');
    const body = {
      model: 'local/echo-pro',
      max_tokens: 8_000,
      messages: [{ role: 'user' as const, content: 'short' }],
    };
    const refused = await refusal(client.chat.completions.create(body));
    expect(refused.status).toBe(402);
    expect(refused.message).toContain(
      `You requested up to 8000 output tokens, but can only afford ${affordable(input, CENT, ECHO_PRO)}:`,
    );
    const served = await client.chat.completions.create(body, FIT);
    expect(served.choices[0]).toMatchObject({ message: { content: 'short' }, finish_reason: 'stop' });
  });

  it('names a tag budget as its scope, and counts the output limit per choice', async () => {
    const budget = await fetch(`${gateway.url}/v1/budgets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${main}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tag: 'one-cent', cap_cents: 1 }),
    });
    expect(budget.status).toBe(200);
    const input = await inputTokensOf('short');
    // Two choices bill twice the output: the most per choice is half what one choice could have.
    let perChoice = 0;
    while (charged(input, 2 * (perChoice + 1), ECHO_PRO) <= CENT) perChoice++;
    const body = { model: 'local/echo-pro', n: 2, messages: [{ role: 'user' as const, content: 'short' }] };
    const refused = await refusal(
      openAi(main).chat.completions.create(body, { headers: { 'x-gw-tag': 'one-cent' } }),
    );
    expect(refused).toMatchObject({ status: 402, type: 'budget_exceeded' });
    expect(refused.message).toContain("Monthly budget of tag 'one-cent' reached: cap $0.01, spent $0.00;");
    expect(refused.message).toContain(
      `You requested up to 8192 output tokens per choice (2 choices), but can only afford ${perChoice}:`,
    );
  });

  it('on /v1/responses: refused without max_output_tokens, served incomplete when asked', async () => {
    const input = await inputTokensOf(PROMPT);
    const canAfford = affordable(input, CENT, ECHO_PRO);
    const client = openAi((await capped('responses')).key);
    const refused = await refusal(client.responses.create({ model: 'local/echo-pro', input: PROMPT }));
    expect(refused.status).toBe(402);
    expect(refused.message).toContain(
      `You requested up to 8192 output tokens, but can only afford ${canAfford}:`,
    );
    const served = await client.responses.create({ model: 'local/echo-pro', input: PROMPT }, FIT);
    expect(served).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      usage: { input_tokens: input, output_tokens: canAfford },
    });
  });

  it('on /v1/messages: a max_tokens the cap cannot cover is refused with what it can afford, and fitted when asked', async () => {
    const input = await inputTokensOf(PROMPT);
    const canAfford = affordable(input, CENT, ECHO_PRO);
    const client = new Anthropic({
      apiKey: (await capped('messages')).key,
      baseURL: gateway.url,
      maxRetries: 0,
    });
    const body = {
      model: 'local/echo-pro',
      max_tokens: 1_000,
      messages: [{ role: 'user' as const, content: PROMPT }],
    };
    const refused = await refusal(client.messages.create(body));
    expect(refused.status).toBe(402);
    expect(refused.message).toContain(
      `You requested up to 1000 output tokens, but can only afford ${canAfford}:`,
    );
    const served = await client.messages.create(body, FIT);
    expect(served.stop_reason).toBe('max_tokens');
    expect(served.usage).toMatchObject({ input_tokens: input, output_tokens: canAfford });
  });

  it('on legacy /v1/completions: OpenAI’s default of 16 tokens is held, refused, and fitted when asked', async () => {
    // 6,330 input tokens at $1.50 a million leave a 1-cent cap room for 14 output tokens at $2, not 16.
    const prompt = words(2_441);
    const input = await inputTokensOf(prompt);
    const canAfford = affordable(input, CENT, INSTRUCT);
    expect(canAfford).toBeGreaterThan(0);
    expect(canAfford).toBeLessThan(16);
    const client = openAi((await capped('legacy')).key);
    const body = { model: 'openai/gpt-3.5-turbo-instruct', prompt };
    const before = openai.requests.length;
    const refused = await refusal(client.completions.create(body));
    expect(refused.status).toBe(402);
    expect(refused.message).toContain(
      `You requested up to 16 output tokens, but can only afford ${canAfford}:`,
    );
    expect(openai.requests.length).toBe(before);
    await client.completions.create(body, FIT);
    expect(openai.requests.at(-1)?.body).toMatchObject({ max_tokens: canAfford });
  });

  it('refuses an x-gw-fit-output other than true or false with 400 naming the header', async () => {
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${main}`,
        'content-type': 'application/json',
        'x-gw-fit-output': 'yes',
      },
      body: JSON.stringify({ model: 'local/echo', messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(response.status).toBe(400);
    expect((await json(response)).error.message).toBe("'x-gw-fit-output': true or false");
  });
});
