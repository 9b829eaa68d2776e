import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A provider's organization reports in front of its chat simulator: every call passes through to `target`, and what
 * each answer's usage says is recorded per key, UTC day and model, then billed by the simulator's own price list
 * (which may differ from the gateway's: cached tokens at another rate, a long-context tier, a planted drift) and
 * served in the provider's documented formats:
 * - OpenAI: `GET /v1/organization/costs` (daily buckets, `group_by` project_id and line_item, amounts in dollars as
 *   JSON numbers) and `GET /v1/organization/usage/completions` (`group_by` model, api_key_id, project_id), bearer
 *   admin key, paged by `next_page`;
 * - Anthropic: `GET /v1/organizations/cost_report` (`group_by[]` workspace_id and description, amounts as decimal
 *   strings of cents, with `token_type` and `context_window`) and `GET /v1/organizations/usage_report/messages`,
 *   admin key in `x-api-key` with `anthropic-version`, paged by `next_page`.
 */

/** Nano-dollars per million tokens. */
export interface SimRates {
  input: bigint;
  cachedInput: bigint;
  output: bigint;
}
export interface SimPrice extends SimRates {
  /** A prompt of more than `above` tokens is billed at these rates for all its tokens. */
  longContext?: { above: number } & SimRates;
}

export interface CostReportOptions {
  family: 'openai' | 'anthropic';
  /** The chat simulator the calls go on to. */
  target: string;
  adminKey: string;
  clock: () => Date;
  /** By the model name the provider sees (`gpt-4o-mini`). */
  prices: Record<string, SimPrice>;
  /** The project (OpenAI) or workspace (Anthropic) of an API key; null: the default one. */
  groupOf?: (apiKey: string) => string | null;
}

interface Served {
  key: string;
  day: string;
  model: string;
  uncached: number;
  cached: number;
  output: number;
  long: boolean;
  nanos: Record<'input' | 'cached' | 'output', bigint>;
}

export interface CostReportSim {
  url: string;
  served: Served[];
  /** Bills every later report this many percent above what was served (a planted drift); 0 for none. */
  drift(percent: number): void;
  /** Report calls received, with their query strings, for assertions on the wire format. */
  calls: { path: string; query: URLSearchParams; headers: IncomingMessage['headers'] }[];
  close(): Promise<void>;
}

const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;
const keyId = (key: string) => `key_${createHash('sha256').update(key).digest('hex').slice(0, 16)}`;

export async function startCostReports(options: CostReportOptions): Promise<CostReportSim> {
  const served: Served[] = [];
  const calls: CostReportSim['calls'] = [];
  let driftPercent = 0;
  const groupOf = options.groupOf ?? (() => null);

  const record = (key: string, model: string, usage: Record<string, unknown>) => {
    const n = (v: unknown) => (typeof v === 'number' ? v : 0);
    const openai = options.family === 'openai';
    const prompt = openai ? n(usage.prompt_tokens) : n(usage.input_tokens) + n(usage.cache_read_input_tokens);
    const cached = openai
      ? n((usage.prompt_tokens_details as Record<string, unknown> | undefined)?.cached_tokens)
      : n(usage.cache_read_input_tokens);
    const output = openai ? n(usage.completion_tokens) : n(usage.output_tokens);
    const price = options.prices[model];
    if (!price) throw new Error(`the cost report simulator has no price for ${model}`);
    const long = price.longContext !== undefined && prompt > price.longContext.above;
    const rates = long ? (price.longContext as SimRates) : price;
    const line = (q: number, rate: bigint) => ceilDiv(BigInt(q) * rate, 1_000_000n);
    served.push({
      key,
      model,
      day: options.clock().toISOString().slice(0, 10),
      uncached: prompt - cached,
      cached,
      output,
      long,
      nanos: {
        input: line(prompt - cached, rates.input),
        cached: line(cached, rates.cachedInput),
        output: line(output, rates.output),
      },
    });
  };

  const forward = async (req: IncomingMessage, body: Buffer, res: ServerResponse) => {
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([k]) => !['host', 'content-length', 'connection'].includes(k)),
    ) as Record<string, string>;
    const answer = await fetch(`${options.target}${req.url}`, {
      method: req.method,
      headers,
      body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body,
    });
    const text = Buffer.from(await answer.arrayBuffer());
    const type = answer.headers.get('content-type') ?? '';
    if (answer.ok && type.includes('json')) {
      const reply = JSON.parse(text.toString('utf8'));
      const key = headers.authorization?.replace(/^Bearer\s+/i, '') ?? headers['x-api-key'] ?? '';
      if (reply?.usage && typeof reply.model === 'string') record(key, reply.model, reply.usage);
    }
    const out: Record<string, string> = {};
    answer.headers.forEach((v, k) => {
      if (!['content-length', 'content-encoding', 'transfer-encoding', 'connection'].includes(k)) out[k] = v;
    });
    res.writeHead(answer.status, out).end(text);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://sim');
      const report = reportOf(url.pathname);
      if (!report) {
        forward(req, Buffer.concat(chunks), res).catch((e) => res.writeHead(502).end(String(e)));
        return;
      }
      calls.push({ path: url.pathname, query: url.searchParams, headers: req.headers });
      const reply = report(url.searchParams, req.headers);
      res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify(reply.body));
    });
  });

  type Report = (q: URLSearchParams, h: IncomingMessage['headers']) => { status: number; body: unknown };
  const reportOf = (path: string): Report | undefined => {
    if (options.family === 'openai') {
      if (path === '/v1/organization/costs') return openAiReport('costs');
      if (path === '/v1/organization/usage/completions') return openAiReport('usage');
      return undefined;
    }
    if (path === '/v1/organizations/cost_report') return anthropicReport('costs');
    if (path === '/v1/organizations/usage_report/messages') return anthropicReport('usage');
    return undefined;
  };

  const drifted = (nanos: bigint) =>
    ceilDiv(nanos * BigInt(100 * 100 + Math.round(driftPercent * 100)), 10_000n);

  /** Days from start (inclusive) to end (exclusive), a bucket each, paged by `limit` buckets. */
  const buckets = (startMs: number, endMs: number, limit: number, page: string | null) => {
    const days: number[] = [];
    for (let t = startMs; t < endMs; t += 86_400_000) days.push(t);
    const from = page ? Number(page) : 0;
    const shown = days.slice(from, from + limit);
    const more = from + limit < days.length;
    return { shown, more, next: more ? String(from + limit) : null };
  };

  const openAiReport =
    (kind: 'costs' | 'usage'): Report =>
    (q, h) => {
      if (h.authorization !== `Bearer ${options.adminKey}`)
        return {
          status: 401,
          body: {
            error: {
              message: 'Incorrect API key provided',
              type: 'invalid_request_error',
              code: 'invalid_api_key',
            },
          },
        };
      const start = Number(q.get('start_time')) * 1000;
      const end = q.get('end_time') ? Number(q.get('end_time')) * 1000 : start + 7 * 86_400_000;
      const groups = q.getAll('group_by');
      const page = buckets(start, end, Number(q.get('limit') ?? 7), q.get('page'));
      const data = page.shown.map((t) => {
        const day = new Date(t).toISOString().slice(0, 10);
        const rows = served.filter((s) => s.day === day);
        const results: Record<string, unknown>[] = [];
        const grouped = new Map<string, Served[]>();
        for (const s of rows) {
          const parts = [
            groups.includes('project_id') ? groupOf(s.key) : null,
            kind === 'usage' && groups.includes('model') ? s.model : null,
            kind === 'usage' && groups.includes('api_key_id') ? keyId(s.key) : null,
            kind === 'costs' && groups.includes('line_item') ? s.model : null,
          ];
          const id = JSON.stringify(parts);
          grouped.set(id, [...(grouped.get(id) ?? []), s]);
        }
        for (const [id, list] of grouped) {
          const [project, model, apiKey, lineModel] = JSON.parse(id) as (string | null)[];
          if (kind === 'usage') {
            results.push({
              object: 'organization.usage.completions.result',
              input_tokens: list.reduce((a, s) => a + s.uncached + s.cached, 0),
              input_cached_tokens: list.reduce((a, s) => a + s.cached, 0),
              output_tokens: list.reduce((a, s) => a + s.output, 0),
              input_audio_tokens: 0,
              output_audio_tokens: 0,
              num_model_requests: list.length,
              project_id: project,
              user_id: null,
              api_key_id: apiKey,
              model,
              batch: null,
            });
            continue;
          }
          const items: [string, bigint][] = lineModel
            ? [
                [`${lineModel}, input`, list.reduce((a, s) => a + s.nanos.input, 0n)],
                [`${lineModel}, cached input`, list.reduce((a, s) => a + s.nanos.cached, 0n)],
                [`${lineModel}, output`, list.reduce((a, s) => a + s.nanos.output, 0n)],
              ]
            : [
                [
                  null as unknown as string,
                  list.reduce((a, s) => a + s.nanos.input + s.nanos.cached + s.nanos.output, 0n),
                ],
              ];
          for (const [item, nanos] of items) {
            if (nanos === 0n) continue;
            results.push({
              object: 'organization.costs.result',
              amount: { value: Number(drifted(nanos)) / 1e9, currency: 'usd' },
              line_item: item,
              project_id: project,
            });
          }
        }
        return { object: 'bucket', start_time: t / 1000, end_time: t / 1000 + 86_400, results };
      });
      return { status: 200, body: { object: 'page', data, has_more: page.more, next_page: page.next } };
    };

  const cents = (nanos: bigint) => {
    const whole = nanos / 10_000_000n;
    const fraction = (nanos % 10_000_000n).toString().padStart(7, '0').replace(/0+$/, '');
    return fraction ? `${whole}.${fraction}` : `${whole}`;
  };

  const anthropicReport =
    (kind: 'costs' | 'usage'): Report =>
    (q, h) => {
      if (h['x-api-key'] !== options.adminKey || !h['anthropic-version'])
        return {
          status: 401,
          body: { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } },
        };
      const start = Date.parse(q.get('starting_at') ?? '');
      const end = q.get('ending_at') ? Date.parse(q.get('ending_at') as string) : start + 7 * 86_400_000;
      const groups = q.getAll('group_by[]');
      const page = buckets(start, end, Number(q.get('limit') ?? 7), q.get('page'));
      const data = page.shown.map((t) => {
        const day = new Date(t).toISOString().slice(0, 10);
        const results: Record<string, unknown>[] = [];
        const grouped = new Map<string, Served[]>();
        for (const s of served.filter((x) => x.day === day)) {
          const by = kind === 'costs' ? groups.includes('description') : groups.includes('model');
          const parts = [
            groups.includes('workspace_id') ? groupOf(s.key) : null,
            by ? s.model : null,
            kind === 'usage' && groups.includes('api_key_id') ? keyId(s.key) : null,
            by ? s.long : null,
          ];
          const id = JSON.stringify(parts);
          grouped.set(id, [...(grouped.get(id) ?? []), s]);
        }
        for (const [id, list] of grouped) {
          const [workspace, model, apiKey, long] = JSON.parse(id) as [
            string | null,
            string | null,
            string | null,
            boolean | null,
          ];
          const window = long === null ? null : long ? '200k-1M' : '0-200k';
          if (kind === 'usage') {
            results.push({
              uncached_input_tokens: list.reduce((a, s) => a + s.uncached, 0),
              cache_read_input_tokens: list.reduce((a, s) => a + s.cached, 0),
              cache_creation: { ephemeral_1h_input_tokens: 0, ephemeral_5m_input_tokens: 0 },
              output_tokens: list.reduce((a, s) => a + s.output, 0),
              server_tool_use: { web_search_requests: 0 },
              api_key_id: apiKey,
              workspace_id: workspace,
              model,
              service_tier: 'standard',
              context_window: window,
            });
            continue;
          }
          const items: [string | null, bigint][] = model
            ? [
                ['uncached_input_tokens', list.reduce((a, s) => a + s.nanos.input, 0n)],
                ['cache_read_input_tokens', list.reduce((a, s) => a + s.nanos.cached, 0n)],
                ['output_tokens', list.reduce((a, s) => a + s.nanos.output, 0n)],
              ]
            : [[null, list.reduce((a, s) => a + s.nanos.input + s.nanos.cached + s.nanos.output, 0n)]];
          for (const [tokenType, nanos] of items) {
            if (nanos === 0n) continue;
            results.push({
              currency: 'USD',
              amount: cents(drifted(nanos)),
              workspace_id: workspace,
              description: model ? `${model} ${tokenType}` : null,
              cost_type: model ? 'tokens' : null,
              context_window: window,
              model,
              service_tier: model ? 'standard' : null,
              token_type: tokenType,
            });
          }
        }
        return {
          starting_at: new Date(t).toISOString(),
          ending_at: new Date(t + 86_400_000).toISOString(),
          results,
        };
      });
      return { status: 200, body: { data, has_more: page.more, next_page: page.next } };
    };

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    served,
    calls,
    drift(percent) {
      driftPercent = percent;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
