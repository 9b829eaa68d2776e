import OpenAI, { toFile } from 'openai';
import { startTestGateway, type TestGateway, type TestGatewayOptions } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { Upstream } from '../upstreams/types.ts';

export interface FilesWorld {
  gateway: TestGateway;
  openai: Upstream;
  key: string;
  accountId: string;
  client: OpenAI;
  env: Record<string, string>;
  clientFor(key: string, gateway?: TestGateway): OpenAI;
  /** Uploads text as a JSONL file of purpose batch. */
  upload(text: string, client?: OpenAI): Promise<OpenAI.FileObject>;
  close(): Promise<void>;
}

/** A gateway over the OpenAI chat simulator, a funded account and an `openai` SDK client on its key. */
export async function startFilesWorld(
  extra: Record<string, string> = {},
  options: TestGatewayOptions = {},
): Promise<FilesWorld> {
  const openai = await startOpenAiUpstream();
  const env = {
    OPENAI_API_KEY: 'sk-upstream-openai',
    OPENAI_BASE_URL: `${openai.url}/v1`,
    GATEWAY_UPSTREAM_TIMEOUT_MS: '5000',
    // These worlds exercise the gateway's own line runner; upstream batch APIs are tested in upstream-*.e2e.
    GATEWAY_BATCH_APIS: 'none',
    ...extra,
  };
  const gateway = await startTestGateway(env, { workerIntervalsMs: { batches: 50 }, ...options });
  const account = await json(await gateway.admin('/accounts', { name: 'files' }));
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 10_000, reference: 'funding' });
  const clientFor = (key: string, on: TestGateway = gateway) =>
    new OpenAI({ apiKey: key, baseURL: `${on.url}/v1`, maxRetries: 0 });
  const client = clientFor(account.key);
  return {
    gateway,
    openai,
    key: account.key,
    accountId: account.account_id,
    client,
    env,
    clientFor,
    upload: async (text, by = client) =>
      by.files.create({ file: await toFile(Buffer.from(text), 'input.jsonl'), purpose: 'batch' }),
    async close() {
      await gateway.close();
      await openai.close();
    },
  };
}

/** A line of OpenAI's batch input format for the chat simulator. */
export function chatLine(customId: string, text: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    custom_id: customId,
    method: 'POST',
    url: '/v1/chat/completions',
    body: {
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: text }],
      max_tokens: 50,
      ...extra,
    },
  });
}

export async function waitForStatus(
  client: OpenAI,
  batchId: string,
  accept: (status: string) => boolean,
  ms = 20_000,
): Promise<OpenAI.Batch> {
  const deadline = Date.now() + ms;
  for (;;) {
    const batch = await client.batches.retrieve(batchId);
    if (accept(batch.status)) return batch;
    if (Date.now() > deadline) throw new Error(`batch ${batchId} still ${batch.status} after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export const jsonl = (text: string) =>
  text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));
