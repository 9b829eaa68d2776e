import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NANOS_PER_CENT } from '../../events/money.ts';
import { startAnthropicUpstream } from '../upstreams/anthropic.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { RecordedRequest, Upstream } from '../upstreams/types.ts';
import { embeddedClient } from './embedded-store.ts';
import { Agent, type FaultGateway, inLanes, send, shapeProblem, startFaultGateway } from './fault-gateway.ts';

const SEED = Number(process.env.FAULTS_SEED ?? 20) + 7;
const REQUESTS = Number(process.env.FAULTS_PRICED_REQUESTS ?? 600);
const CAP_CENTS = 60;

// What a provider may receive: its documented fields, with only the values the gateway prices. Written here from
// the providers' API references, not imported from the gateway, so that a field the gateway starts to forward
// without a price shows up as a failure.
const OPENAI_CHAT = new Set(
  'messages model frequency_penalty function_call functions logit_bias logprobs max_completion_tokens max_tokens metadata modalities n parallel_tool_calls prediction presence_penalty prompt_cache_key prompt_cache_retention reasoning_effort response_format safety_identifier seed service_tier stop store stream stream_options temperature tool_choice tools top_logprobs top_p user verbosity'.split(
    ' ',
  ),
);
const OPENAI_LEGACY = new Set(
  'model prompt best_of echo frequency_penalty logit_bias logprobs max_tokens n presence_penalty seed stop stream stream_options suffix temperature top_p user'.split(
    ' ',
  ),
);
const ANTHROPIC = new Set(
  'model messages max_tokens system metadata stop_sequences stream temperature top_k top_p tools tool_choice thinking service_tier cache_control output_config speed inference_geo container'.split(
    ' ',
  ),
);

// 90 KB of text, 6,751 tokens; a prediction of three times that is 1.6 cents on gpt-4o-mini, held whole.
const LARGE = 'international development understanding '.repeat(2250);
const fn = { type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } };
const unknownKey = fc.constantFrom(
  'top_k',
  'search_parameters',
  'plugins',
  'extra_body',
  'x_priced',
  'user_tier',
);
/** Usually absent, so that most requests are served and spend the cap. */
const maybe = <T>(arb: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });

const chatBody = fc.record({
  model: fc.constantFrom(
    'openai/gpt-4o-mini',
    'openai/gpt-4o-mini',
    'anthropic/claude-sonnet-4-5',
    'local/echo',
  ),
  max_tokens: maybe(fc.integer({ min: 1, max: 400 })),
  stream: maybe(fc.boolean()),
  n: maybe(fc.integer({ min: 1, max: 3 })),
  service_tier: maybe(fc.constantFrom('auto', 'default', 'flex', 'priority', 'scale', null)),
  tools: maybe(
    fc.array(
      fc
        .constantFrom('function', 'custom', 'web_search_preview', 'code_interpreter', 'file_search')
        .map((type) =>
          type === 'function' ? fn : type === 'custom' ? { type, custom: { name: 'patch' } } : { type },
        ),
      { minLength: 1, maxLength: 3 },
    ),
  ),
  prediction: maybe(
    fc.constantFrom('short guess', LARGE, LARGE.repeat(3)).map((content) => ({ type: 'content', content })),
  ),
  modalities: maybe(fc.constantFrom(['text'], ['text', 'audio'])),
  web_search_options: maybe(fc.constant({})),
  audioInput: maybe(fc.constant(true)),
});

const legacyBody = fc.record({
  model: fc.constant('openai/gpt-3.5-turbo-instruct'),
  prompt: fc.constantFrom('def f():', 'Once upon a time'),
  suffix: maybe(fc.constantFrom('    return 1', LARGE)),
  max_tokens: maybe(fc.integer({ min: 1, max: 200 })),
  stream: maybe(fc.boolean()),
  echo: maybe(fc.boolean()),
});

const oneHour = { type: 'ephemeral', ttl: '1h' };
const messagesBody = fc.record({
  model: fc.constant('anthropic/claude-sonnet-4-5'),
  max_tokens: fc.integer({ min: 1, max: 400 }),
  stream: maybe(fc.boolean()),
  service_tier: maybe(fc.constantFrom('auto', 'standard_only', 'priority')),
  speed: maybe(fc.constantFrom('standard', 'fast')),
  container: maybe(fc.constant('container_1')),
  inference_geo: maybe(fc.constantFrom('us', null)),
  cache_control: maybe(fc.constantFrom({ type: 'ephemeral' }, { type: 'ephemeral', ttl: '5m' }, oneHour)),
  system: maybe(fc.constant([{ type: 'text', text: 'Be terse.', cache_control: oneHour }])),
});

/** A request: one endpoint's body, its text given or large, with perhaps a field nobody priced. */
const request = fc
  .tuple(
    fc.oneof(
      {
        weight: 3,
        arbitrary: chatBody.map((b) => ({
          path: '/v1/chat/completions',
          body: b as Record<string, unknown>,
        })),
      },
      {
        weight: 1,
        arbitrary: legacyBody.map((b) => ({ path: '/v1/completions', body: b as Record<string, unknown> })),
      },
      {
        weight: 1,
        arbitrary: messagesBody.map((b) => ({ path: '/v1/messages', body: b as Record<string, unknown> })),
      },
    ),
    maybe(unknownKey),
    fc.constantFrom('hi', 'tell me more', LARGE),
  )
  .map(([{ path, body }, unknown, text]) => {
    const sent: Record<string, unknown> = Object.fromEntries(
      Object.entries(body).filter(([, v]) => v !== undefined),
    );
    // `cache: skip`: every request is held and settled, never answered from the response cache.
    const audio = sent.audioInput === true;
    delete sent.audioInput;
    const content = audio
      ? [
          { type: 'text', text },
          { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
        ]
      : text;
    if (path !== '/v1/completions')
      Object.assign(sent, { cache: 'skip', messages: [{ role: 'user', content }] });
    if (unknown !== undefined) sent[unknown] = { mode: 'on' };
    return { path, body: sent };
  });

/** What in one request a provider received was never priced, or undefined when everything was. */
function unpriced(received: RecordedRequest): string | undefined {
  const body = received.body as Record<string, unknown>;
  const known =
    received.path === '/v1/messages'
      ? ANTHROPIC
      : received.path === '/v1/completions'
        ? OPENAI_LEGACY
        : OPENAI_CHAT;
  const stray = Object.keys(body).find((key) => !known.has(key));
  if (stray !== undefined) return `the field ${stray}`;
  if (received.path === '/v1/messages') {
    if (body.speed != null && body.speed !== 'standard') return `speed ${String(body.speed)}`;
    for (const field of ['inference_geo', 'container'])
      if (body[field] != null) return `${field} ${String(body[field])}`;
    if (
      body.service_tier !== undefined &&
      body.service_tier !== 'auto' &&
      body.service_tier !== 'standard_only'
    )
      return `service_tier ${String(body.service_tier)}`;
    if (JSON.stringify(body).includes('"ttl":"1h"')) return 'a 1-hour cache write';
    return undefined;
  }
  if (body.service_tier != null && body.service_tier !== 'auto' && body.service_tier !== 'default')
    return `service_tier ${String(body.service_tier)}`;
  const tools = Array.isArray(body.tools) ? (body.tools as { type?: string }[]) : [];
  const builtIn = tools.find((t) => t.type !== 'function' && t.type !== 'custom');
  if (builtIn) return `a ${builtIn.type} tool`;
  if (Array.isArray(body.modalities) && body.modalities.some((m) => m !== 'text')) return 'audio output';
  if (JSON.stringify(body).includes('"input_audio"')) return 'audio input';
  return undefined;
}

describe('fields that change the price, fuzzed against a small cap', () => {
  let openai: Upstream;
  let anthropic: Upstream;
  let gateway: FaultGateway;
  let subKey = '';
  let subId = '';

  beforeAll(async () => {
    [openai, anthropic] = await Promise.all([startOpenAiUpstream(), startAnthropicUpstream()]);
    gateway = await startFaultGateway({
      OPENAI_API_KEY: 'sk-sim-openai',
      OPENAI_BASE_URL: `${openai.url}/v1`,
      ANTHROPIC_API_KEY: 'sk-sim-anthropic',
      ANTHROPIC_BASE_URL: anthropic.url,
    });
    const sub = await send(gateway.url, {
      method: 'POST',
      path: '/v1/sub-accounts',
      headers: { authorization: `Bearer ${gateway.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'priced', spend_cap_cents: CAP_CENTS, rate_limit_rpm: 1_000_000 }),
    });
    ({ key: subKey, id: subId } = sub.json as { key: string; id: string });
  });
  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([openai?.close(), anthropic?.close()]);
  });

  it('sends no provider a field it did not price, and never spends past the cap', async () => {
    const requests = fc.sample(request, { seed: SEED, numRuns: REQUESTS });
    const statuses = new Map<number, number>();
    const problems: string[] = [];
    const agent = new Agent({ keepAlive: true, maxSockets: 16 });
    await inLanes(requests, 16, async ({ path, body }, i) => {
      const answer = await send(gateway.url, {
        method: 'POST',
        path,
        headers: { authorization: `Bearer ${subKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        agent,
        timeoutMs: 60_000,
      });
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      const shape = shapeProblem(answer, path === '/v1/messages' ? 'anthropic' : 'openai');
      if (![200, 400, 402].includes(answer.status) || shape)
        problems.push(`#${i} ${path} ${answer.status} ${shape ?? answer.text.slice(0, 200)}`);
      const message = (answer.json as { error?: { message?: string } } | undefined)?.error?.message ?? '';
      if (answer.status === 400 && !/'[^']+'/.test(message))
        problems.push(`#${i} a 400 naming no field: ${message}`);
    });
    agent.destroy();

    const received = [...openai.requests, ...anthropic.requests].filter((r) => r.method === 'POST');
    const leaks = received.flatMap((r) => {
      const what = unpriced(r);
      return what ? [`${r.path} received ${what}`] : [];
    });

    const client = await embeddedClient(gateway.dataDir);
    const { rows } = await client.query<{ type: string; nanos: string }>(
      `SELECT type, COALESCE(data->>'chargedNanos', data->>'overrunNanos') AS nanos FROM events
       WHERE type IN ('SpendSettled', 'SpendOverrun') AND data->>'subAccountId' = $1`,
      [subId],
    );
    await client.end();
    const spent = rows.reduce((sum, row) => sum + BigInt(row.nanos), 0n);
    const overruns = rows.filter((row) => row.type === 'SpendOverrun').length;
    const settled = rows.filter((row) => row.type === 'SpendSettled').length;

    console.log(
      `FAULTS priced-fields requests=${REQUESTS} statuses=${[...statuses].map(([s, n]) => `${s}:${n}`).join(',')} ` +
        `provider_calls=${received.length} unpriced_forwarded=${leaks.length} settled=${settled} ` +
        `spent_cents=${(Number(spent) / Number(NANOS_PER_CENT)).toFixed(4)} cap_cents=${CAP_CENTS} overruns=${overruns}`,
    );
    expect(problems).toEqual([]);
    expect(leaks).toEqual([]);
    expect(spent).toBeLessThanOrEqual(BigInt(CAP_CENTS) * NANOS_PER_CENT);
    expect(overruns).toBe(0);
    expect(settled).toBe(statuses.get(200) ?? 0);
    // The fuzz reached the provider, and the cap bit: neither check is vacuous.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(20);
    expect(statuses.get(402) ?? 0).toBeGreaterThan(0);
  });
});
