import OpenAI from 'openai';
import { nanosToCents, type PriceLine, priceCharge } from '../../src/contracts/money.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { holdsOf } from '../support/holds.ts';
import { type Json, json } from '../support/json.ts';
import { startCohereUpstream } from '../upstreams/cohere.ts';
import { startGeminiEmbedUpstream } from '../upstreams/gemini-embed.ts';
import { startMistralUpstream } from '../upstreams/mistral.ts';
import { startOpenAiModalitiesUpstream } from '../upstreams/openai-modalities.ts';
import type { Upstream } from '../upstreams/types.ts';
import { startVoyageUpstream } from '../upstreams/voyage.ts';

export interface ModalityWorld {
  gateway: TestGateway;
  key: string;
  client: OpenAI;
  sims: { openai: Upstream; mistral: Upstream; gemini: Upstream; cohere: Upstream; voyage: Upstream };
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
  /** The usage report's row for a tag, once the projection has it. */
  usageOf(tag: string): Promise<Json>;
  /** How the holds of a request ended, once none is open. */
  holdsOf(requestId: string | null): Promise<string[]>;
  close(): Promise<void>;
}

/** A gateway whose providers are all simulators, and a funded account on it. */
export async function startModalityWorld(): Promise<ModalityWorld> {
  const [openai, mistral, gemini, cohere, voyage] = await Promise.all([
    startOpenAiModalitiesUpstream(),
    startMistralUpstream(),
    startGeminiEmbedUpstream(),
    startCohereUpstream(),
    startVoyageUpstream(),
  ]);
  const gateway = await startTestGateway({
    OPENAI_API_KEY: 'sk-upstream-openai',
    OPENAI_BASE_URL: `${openai.url}/v1`,
    MISTRAL_API_KEY: 'upstream-mistral',
    MISTRAL_BASE_URL: `${mistral.url}/v1`,
    GOOGLE_API_KEY: 'upstream-google',
    GOOGLE_BASE_URL: gemini.url,
    COHERE_API_KEY: 'upstream-cohere',
    COHERE_BASE_URL: cohere.url,
    VOYAGEAI_API_KEY: 'upstream-voyage',
    VOYAGEAI_BASE_URL: `${voyage.url}/v1`,
    GATEWAY_UPSTREAM_TIMEOUT_MS: '1500',
    GATEWAY_MAX_RETRY_WAIT_MS: '2000',
  });
  const account = await json(await gateway.admin('/accounts', { name: 'modalities' }));
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 10_000, reference: 'funding' });
  const key: string = account.key;
  const authorization = `Bearer ${key}`;
  return {
    gateway,
    key,
    client: new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 }),
    sims: { openai, mistral, gemini, cohere, voyage },
    post: (path, body, headers = {}) =>
      fetch(`${gateway.url}/v1${path}`, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      }),
    async usageOf(tag) {
      const report = await eventually(
        async () => json(await fetch(`${gateway.url}/v1/usage/by-tag`, { headers: { authorization } })),
        (r) => r.data.some((row: Json) => row.tag === tag),
        3000,
      );
      return report.data.find((row: Json) => row.tag === tag);
    },
    holdsOf: (requestId) => holdsOf(gateway.runtime.database.pool, requestId),
    async close() {
      await gateway.close();
      await Promise.all([openai, mistral, gemini, cohere, voyage].map((sim) => sim.close()));
    },
  };
}

/** What the gateway charges for these lines, in cents as X-Cost-Cents and the usage report state it. */
export const centsFor = (lines: PriceLine[]) => nanosToCents(priceCharge(lines).chargedNanos);

let tags = 0;
/** A tag of its own for each request whose charge a test checks. */
export const freshTag = (what: string) => `${what}-${process.pid}-${Date.now()}-${tags++}`;
