import { z } from 'zod';
import { defineTool, type ToolDef } from '../tool.ts';
import { Id, Month } from './common.ts';
import { body } from './served.ts';

const getJson =
  (path: string, query?: Record<string, string | number | undefined>) =>
  async (context: Parameters<ToolDef['call']>[1]) =>
    body<Record<string, unknown>>(await context.twin({ method: 'GET', path, query }));

const byId = (path: string, id: string) => `${path}/${encodeURIComponent(id)}`;

export const getBalanceTool = defineTool({
  name: 'get_balance',
  title: 'Balance',
  description:
    "The account's prepaid balance; for a sub-account's key, what is left of its spend cap (GET /v1/balance).",
  access: 'read',
  input: z.object({}),
  run: (_args, context) => getJson('/v1/balance')(context),
});

const USAGE_PATHS = { tag: 'by-tag', sub_account: 'by-sub-account', model: 'by-model' } as const;

export const getUsageTool = defineTool({
  name: 'get_usage',
  title: 'Usage',
  description:
    "A month's requests and spend grouped by cost tag, sub-account or model (GET /v1/usage/by-tag, " +
    '/by-sub-account, /by-model). A sub-account key sees only its own.',
  access: 'read',
  input: z.object({
    by: z.enum(['tag', 'sub_account', 'model']).default('tag'),
    month: Month,
  }),
  run: ({ by, month }, context) => getJson(`/v1/usage/${USAGE_PATHS[by]}`, { month })(context),
});

export const listBudgetsTool = defineTool({
  name: 'list_budgets',
  title: 'Tag budgets',
  description:
    "The account's monthly budgets per cost tag, with what each tag spent this month (GET /v1/budgets). Main keys only.",
  access: 'read',
  mainKeyOnly: true,
  input: z.object({}),
  run: (_args, context) => getJson('/v1/budgets')(context),
});

/**
 * Keys are listed, never issued or rotated here: the new key would land in the agent's context and transcripts,
 * where no secret belongs (docs/mcp.md).
 */
export const listKeysTool = defineTool({
  name: 'list_keys',
  title: 'API keys',
  description:
    "The account's own keys, or one sub-account's: name, prefix, when created, last used and expiring; never the key " +
    'itself (GET /v1/keys, /v1/sub-accounts/{id}/keys). Main keys only.',
  access: 'read',
  mainKeyOnly: true,
  input: z.object({
    sub_account_id: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe("A sub-account's id; omitted: the account's own keys"),
  }),
  run: ({ sub_account_id }, context) =>
    getJson(sub_account_id ? `${byId('/v1/sub-accounts', sub_account_id)}/keys` : '/v1/keys')(context),
});

export const listRequestsTool = defineTool({
  name: 'list_requests',
  title: 'Request log',
  description:
    'The request log, newest first: model, status, cost, latency and tag of each request (GET /v1/requests).',
  access: 'read',
  input: z.object({
    limit: z.number().int().min(1).max(100).default(20),
    after: z.string().min(1).optional().describe('A request id: the page starts after it'),
    model: z.string().min(1).optional(),
    tag: z.string().min(1).optional(),
    status: z.number().int().min(100).max(599).optional(),
    sub_account_id: z.string().min(1).optional(),
    from: z.iso.datetime({ offset: true }).optional().describe('ISO 8601 time; requests at or after it'),
    to: z.iso.datetime({ offset: true }).optional().describe('ISO 8601 time; requests before it'),
  }),
  run: (args, context) => getJson('/v1/requests', args)(context),
});

export const getRequestTool = defineTool({
  name: 'get_request',
  title: 'One logged request',
  description:
    'One request of the log with its usage, cost and, when kept, its bodies (GET /v1/requests/{id}).',
  access: 'read',
  input: z.object({ id: Id("The request's id (its x-request-id)") }),
  run: ({ id }, context) => getJson(byId('/v1/requests', id))(context),
});

export const listJobsTool = defineTool({
  name: 'list_jobs',
  title: 'Jobs',
  description: 'Asynchronous jobs (video, music, 3D, long transcriptions), newest first (GET /v1/jobs).',
  access: 'read',
  input: z.object({
    limit: z.number().int().min(1).max(100).default(20),
    after: z.string().min(1).optional().describe('A job id: the page starts after it'),
    status: z.enum(['queued', 'processing', 'completed', 'failed']).optional(),
  }),
  run: (args, context) => getJson('/v1/jobs', args)(context),
});

export const getJobTool = defineTool({
  name: 'get_job',
  title: 'One job',
  description: "A job's status and, once completed, a signed URL to its result (GET /v1/jobs/{id}).",
  access: 'read',
  input: z.object({ id: Id("The job's id") }),
  run: ({ id }, context) => getJson(byId('/v1/jobs', id))(context),
});

export const getReplayTool = defineTool({
  name: 'get_replay',
  title: 'One replay',
  description:
    'A replay of a logged request against another model, with its comparison (GET /v1/replays/{id}).',
  access: 'read',
  input: z.object({ id: Id("The replay's id") }),
  run: ({ id }, context) => getJson(byId('/v1/replays', id))(context),
});

export const getEvalTool = defineTool({
  name: 'get_eval',
  title: 'One eval',
  description: "An eval run's results and its winner_model (GET /v1/evals/{id}).",
  access: 'read',
  input: z.object({ id: Id("The eval's id") }),
  run: ({ id }, context) => getJson(byId('/v1/evals', id))(context),
});
