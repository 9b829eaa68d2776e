/**
 * The automatic router's cost, for `npm run bench`: in process, the complexity estimate and one routing decision
 * (the prompt counted as the gateway counts it, then the router's choice); over HTTP, the same request sent with
 * `model: "auto"` and with a named model, one connection, alternated so that drift weighs on both alike.
 */
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { buildCatalog } from '../src/catalog/index.ts';
import type { ChatCompletionRequest } from '../src/chat/request.ts';
import { routeAsk } from '../src/chat/routed.ts';
import { ProviderHealth } from '../src/providers/health.ts';
import { estimateComplexity } from '../src/routing/complexity.ts';
import { Router } from '../src/routing/router.ts';
import { type Endpoint, type Ledger, type Percentiles, percentiles } from './load.ts';

export interface RouterMicro {
  /** Microseconds per call, the median of batches. */
  complexityShortUs: number;
  complexityLongUs: number;
  decisionUs: number;
  countAndDecisionUs: number;
  candidates: number;
}

export interface RoutingStep {
  seconds: number;
  /** Latencies (ms) of the requests answered 200, each kind alternating with the other on one connection. */
  named: Percentiles | undefined;
  auto: Percentiles | undefined;
  errors: number;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

async function perCallUs(batches: number, size: number, run: () => unknown): Promise<number> {
  const times: number[] = [];
  for (let b = 0; b < batches; b++) {
    const started = performance.now();
    for (let i = 0; i < size; i++) await run();
    times.push(((performance.now() - started) * 1000) / size);
  }
  return Math.round(median(times) * 10) / 10;
}

/** The key holder the in-process router measures ask for (a top-level account). */
const BENCH_HOLDER = { accountId: 'acct_bench', subAccountId: null };

export async function routerMicro(): Promise<RouterMicro> {
  const env = { OPENAI_API_KEY: 'b', ANTHROPIC_API_KEY: 'b', GOOGLE_API_KEY: 'b' };
  const router = new Router({ catalog: buildCatalog(), env, health: new ProviderHealth() });
  const short = 'What is the capital of France, and why did it become the capital?';
  const long = `Explain step by step: ${'function f(x) { return x * 2; } and then integrate x^2 dx. '.repeat(280)}`;
  const body = {
    model: 'auto',
    messages: [
      { role: 'system', content: 'You are a helpful assistant.' },
      { role: 'user', content: short },
    ],
  } as ChatCompletionRequest;
  const ask = await routeAsk(BENCH_HOLDER, 'auto', 'auto', body);
  const decision = await router.route(ask, { remember: false });
  return {
    complexityShortUs: await perCallUs(9, 5000, () =>
      estimateComplexity({ lastUserText: short, messages: 2 }),
    ),
    complexityLongUs: await perCallUs(9, 200, () => estimateComplexity({ lastUserText: long, messages: 2 })),
    decisionUs: await perCallUs(9, 1000, () => router.route(ask, { remember: false })),
    countAndDecisionUs: await perCallUs(9, 500, async () =>
      // A fresh body each time: a body's count is kept with it.
      router.route(await routeAsk(BENCH_HOLDER, 'auto', 'auto', { ...body, messages: [...body.messages] }), {
        remember: false,
      }),
    ),
    candidates: decision.candidates.length,
  };
}

export async function routingStep(endpoint: Endpoint, ledger: Ledger, seconds: number): Promise<RoutingStep> {
  // `cache: skip`: a repeated body must reach the router (and the upstream) every time.
  const body = (model: string) =>
    JSON.stringify({ model, messages: [{ role: 'user', content: 'hello' }], max_tokens: 16, cache: 'skip' });
  const bodies = { named: body('openai/gpt-4o-mini'), auto: body('auto') };
  const times: Record<'named' | 'auto', number[]> = { named: [], auto: [] };
  const agent = new Agent({ connections: 1 });
  let errors = 0;
  const until = performance.now() + seconds * 2000;
  try {
    // One request at a time, the two kinds in turn, so that load from elsewhere weighs on both alike.
    for (let i = 0; performance.now() < until; i++) {
      const kind = i % 2 === 0 ? 'named' : 'auto';
      const id = ledger.nextId();
      const started = performance.now();
      const response = await request(`${endpoint.origin}${endpoint.path}`, {
        method: 'POST',
        dispatcher: agent,
        headers: {
          ...endpoint.headers,
          ...endpoint.rotate?.[0],
          'content-type': 'application/json',
          'x-request-id': id,
        },
        body: bodies[kind],
      });
      await response.body.text();
      ledger.record(id, response.statusCode);
      if (response.statusCode === 200) times[kind].push(performance.now() - started);
      else errors++;
    }
  } finally {
    await agent.close();
  }
  return { seconds, named: percentiles(times.named), auto: percentiles(times.auto), errors };
}
