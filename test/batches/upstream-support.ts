import OpenAI, { toFile } from 'openai';
import type pg from 'pg';
import { startTestGateway, type TestGateway, type TestGatewayOptions } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { startAnthropicBatchUpstream } from '../upstreams/anthropic-batch.ts';
import type { BatchUpstream } from '../upstreams/batch-sim.ts';
import { startGeminiBatchUpstream } from '../upstreams/gemini-batch.ts';
import { startOpenAiBatchUpstream } from '../upstreams/openai-batch.ts';

/** The three batch-speaking simulators; DeepSeek (no batch API) is pointed at OpenAI's chat simulator. */
export interface Sims {
  openai: BatchUpstream;
  anthropic: BatchUpstream;
  gemini: BatchUpstream;
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function startSims(): Promise<Sims> {
  const [openai, anthropic, gemini] = await Promise.all([
    startOpenAiBatchUpstream(),
    startAnthropicBatchUpstream(),
    startGeminiBatchUpstream(),
  ]);
  return {
    openai,
    anthropic,
    gemini,
    env: {
      OPENAI_API_KEY: 'sk-upstream-openai',
      OPENAI_BASE_URL: `${openai.url}/v1`,
      ANTHROPIC_API_KEY: 'sk-upstream-anthropic',
      ANTHROPIC_BASE_URL: anthropic.url,
      GOOGLE_API_KEY: 'upstream-google',
      GOOGLE_BASE_URL: gemini.url,
      DEEPSEEK_API_KEY: 'sk-upstream-deepseek',
      DEEPSEEK_BASE_URL: `${openai.url}/v1`,
      GATEWAY_UPSTREAM_TIMEOUT_MS: '5000',
      GATEWAY_BATCH_POLL_MS: '10',
    },
    close: async () => {
      await Promise.all([openai.close(), anthropic.close(), gemini.close()]);
    },
  };
}

export interface Funded {
  gateway: TestGateway;
  key: string;
  accountId: string;
  client: OpenAI;
}

export async function fundedGateway(
  env: Record<string, string>,
  options: TestGatewayOptions = {},
): Promise<Funded> {
  const gateway = await startTestGateway(env, { workerIntervalsMs: { batches: 50 }, ...options });
  const account = await json(await gateway.admin('/accounts', { name: 'batches' }));
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 10_000, reference: 'funding' });
  return {
    gateway,
    key: account.key,
    accountId: account.account_id,
    client: new OpenAI({ apiKey: account.key, baseURL: `${gateway.url}/v1`, maxRetries: 0 }),
  };
}

export function line(customId: string, model: string, text: string, maxTokens = 40): string {
  return JSON.stringify({
    custom_id: customId,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model, messages: [{ role: 'user', content: text }], max_tokens: maxTokens },
  });
}

export async function submit(client: OpenAI, lines: string[], tag?: string): Promise<OpenAI.Batch> {
  const file = await client.files.create({
    file: await toFile(Buffer.from(lines.join('\n')), 'input.jsonl'),
    purpose: 'batch',
  });
  return client.batches.create(
    { input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' },
    tag ? { headers: { 'x-gw-tag': tag } } : undefined,
  );
}

export interface ChargeRow {
  request_id: string;
  discount: string;
  lines: { item: string; quantity: number; unitPriceNanosPerMillion: string }[];
  pass: string;
  fee: string;
  charged: string;
}

export async function chargesOf(pool: pg.Pool, batchId: string): Promise<ChargeRow[]> {
  const { rows } = await pool.query<ChargeRow>(
    `SELECT request_id, discount, lines, pass_through_nanos::text AS pass, fee_nanos::text AS fee,
            charged_nanos::text AS charged
     FROM charges WHERE kind = 'settled' AND starts_with(request_id, $1) ORDER BY request_id`,
    [`${batchId}-`],
  );
  return rows;
}

export async function openHolds(pool: pg.Pool, batchId: string): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM holds WHERE status = 'open' AND starts_with(request_id, $1)`,
    [`${batchId}-`],
  );
  return rows[0]?.n ?? 0;
}

/** Requests a simulator saw on a path, by method. */
export const calls = (sim: BatchUpstream, method: string, path: RegExp) =>
  sim.requests.filter((r) => r.method === method && path.test(r.path));

const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;

/** A chat line's charge at half the standard rates, plus the 5% fee, from the provider's token counts. */
export function batchRateCharge(
  usage: { prompt_tokens: number; completion_tokens: number },
  standard: { input: bigint; output: bigint },
): bigint {
  const input = ceilDiv(BigInt(usage.prompt_tokens) * ceilDiv(standard.input, 2n), 1_000_000n);
  const output = ceilDiv(BigInt(usage.completion_tokens) * ceilDiv(standard.output, 2n), 1_000_000n);
  const pass = input + output;
  return pass + ceilDiv(pass * 5n, 100n);
}
