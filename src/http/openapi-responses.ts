import { z } from 'zod';

/**
 * The response bodies the OpenAPI document describes for routes that declare none of their own (a declared
 * response schema would also serialize, and strip, what the route sends). Objects are open (`looseObject`): a
 * response may carry more than is listed, as OpenAI's do; what is listed must be there with its type. A test
 * validates every JSON answer of every test gateway against the document, so these cannot drift.
 */

export const ErrorBody = z.object({
  error: z.looseObject({
    message: z.string(),
    type: z.string(),
    code: z.union([z.number().int(), z.string()]),
    param: z.string().nullable(),
  }),
});

/** `/v1/messages*` refuses in Anthropic's envelope, with the spec's types and the numeric code beside Anthropic's. */
export const AnthropicErrorBody = z.object({
  type: z.literal('error'),
  error: z.looseObject({ type: z.string(), message: z.string(), code: z.number().int() }),
  request_id: z.string().optional(),
});

const Usage = z.looseObject({
  prompt_tokens: z.number().int().min(0),
  completion_tokens: z.number().int().min(0),
  total_tokens: z.number().int().min(0),
});

const ToolCall = z.looseObject({
  id: z.string(),
  type: z.literal('function'),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});

export const ChatCompletionBody = z.looseObject({
  id: z.string(),
  object: z.literal('chat.completion'),
  created: z.number().int(),
  model: z.string(),
  choices: z
    .array(
      z.looseObject({
        index: z.number().int().min(0),
        message: z.looseObject({
          role: z.literal('assistant'),
          content: z.string().nullable(),
          tool_calls: z.array(ToolCall).optional(),
        }),
        finish_reason: z.string().nullable(),
      }),
    )
    .min(1),
  usage: Usage,
});

const EmbeddingsBody = z.looseObject({
  object: z.literal('list'),
  model: z.string(),
  data: z.array(
    z.looseObject({
      object: z.literal('embedding'),
      index: z.number().int().min(0),
      embedding: z.union([z.array(z.number()), z.string()]),
    }),
  ),
  usage: z.looseObject({ prompt_tokens: z.number().int().min(0), total_tokens: z.number().int().min(0) }),
});

const SubAccount = z.looseObject({
  id: z.string(),
  object: z.literal('sub_account'),
  name: z.string(),
  external_ref: z.string().nullable(),
  spend_cap_cents: z.number(),
  rate_limit_rpm: z.number().int(),
  default_tag: z.string().nullable(),
  created_at: z.number().int(),
  spent_cents: z.number(),
  key: z.string().optional(),
  markup_percent: z.number().min(0),
  price_overrides: z.array(z.looseObject({ model: z.string(), markup_percent: z.number().min(0) })),
  spend_cap_reset: z.enum(['daily', 'weekly', 'monthly']).nullable(),
  rate_limit_tpm: z.number().int().nullable(),
  allowed_models: z.array(z.string()).nullable(),
  spent_this_period_cents: z.number(),
  period_resets_at: z.number().int().nullable(),
});

const StatementFigures = {
  requests: z.number().int().min(0),
  units: z.number().int().min(0),
  input_tokens: z.number().int().min(0),
  output_tokens: z.number().int().min(0),
  cost_cents: z.number(),
  cost_nanos: z.string().regex(/^-?\d+$/),
};

const Statement = z.looseObject({
  object: z.literal('sub_account.statement'),
  sub_account_id: z.string(),
  month: z.string().regex(/^\d{4}-\d{2}$/),
  currency: z.literal('usd'),
  lines: z.array(z.looseObject({ date: z.string(), model: z.string(), ...StatementFigures })),
  total: z.looseObject(StatementFigures),
});

/** A named key as it is listed (`GET /v1/keys`), and, with `key`, as it is issued. */
const ApiKey = z.looseObject({
  object: z.literal('api_key'),
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  sub_account_id: z.string().nullable(),
  created_at: z.number().int(),
  expires_at: z.number().int().nullable(),
});
const KeyList = z.looseObject({
  object: z.literal('list'),
  data: z.array(ApiKey.extend({ last_used_at: z.number().int().nullable() })),
});
const IssuedKey = ApiKey.extend({ key: z.string() });
const RotatedKey = IssuedKey.extend({ replaces: z.string(), replaced_key_expires_at: z.number().int() });

const FileObject = z.looseObject({
  id: z.string(),
  object: z.literal('file'),
  bytes: z.number().int().min(0),
  created_at: z.number().int(),
  filename: z.string(),
  purpose: z.string(),
  status: z.string(),
});

const Job = z.looseObject({
  id: z.string(),
  object: z.literal('job'),
  status: z.enum(['queued', 'processing', 'completed', 'failed']),
  modality: z.string(),
  model: z.string(),
  created_at: z.number().int(),
  updated_at: z.number().int(),
  error: z.looseObject({ message: z.string(), type: z.string(), code: z.number().int() }).nullable(),
  result_file_id: z.string().nullable(),
  result_url: z.string().nullable(),
  webhook_url: z.string().nullable(),
  webhook_delivered: z.boolean(),
  attempts: z.number().int().min(0),
  cost_cents: z.number().nullable(),
  cancellation: z
    .looseObject({
      cancelled_at: z.number().int(),
      after_handoff: z.boolean(),
      charge: z.enum(['none', 'pending', 'charged']),
      basis: z.enum(['before_handoff', 'provider_output', 'hold', 'not_taken']).nullable(),
    })
    .nullable(),
});

const UsageRow = z.looseObject({
  requests: z.number().int().min(0),
  cost_cents: z.number(),
  units: z.number().int().min(0),
});

const Month = z.string().regex(/^\d{4}-\d{2}$/);
const CentsUsd = { cents: z.number().int(), usd: z.number() };

const AccountSummary = z.looseObject({
  account_id: z.string(),
  name: z.string(),
  created_at: z.string(),
  rate_limit_rpm: z.number().int(),
  balance: z.object(CentsUsd),
  active_keys: z.number().int().min(0),
  sub_accounts: z.number().int().min(0),
});

const Key = z.looseObject({
  key_id: z.string(),
  account_id: z.string(),
  key_prefix: z.string(),
  created_at: z.string(),
  revoked_at: z.string().nullable(),
});

const AccountBalance = z.looseObject({
  account_id: z.string(),
  ...CentsUsd,
  topped_up_cents: z.number(),
  adjusted_cents: z.number(),
  charged_cents: z.number(),
});

const Budget = z.looseObject({
  object: z.literal('budget'),
  tag: z.string(),
  cap_cents: z.number().int().min(0),
  month: Month,
  spent_cents: z.number(),
});

const Figures = { requests: z.number().int().min(0), cost_cents: z.number(), units: z.number().int().min(0) };

const Readiness = z.looseObject({
  status: z.enum(['ready', 'not_ready']),
  checks: z.record(z.string(), z.string()),
});

/** `METHOD path` (Fastify's path, `:name` parameters) → status → body. */
export const DOCUMENTED_RESPONSES: Record<string, Record<number, z.ZodType>> = {
  'POST /v1/chat/completions': { 200: ChatCompletionBody },
  'POST /v1/embeddings': { 200: EmbeddingsBody },
  'GET /v1/jobs/:id': { 200: Job },
  'DELETE /v1/jobs/:id': { 200: Job },
  'GET /v1/sub-accounts': { 200: z.looseObject({ object: z.literal('list'), data: z.array(SubAccount) }) },
  'POST /v1/sub-accounts': { 200: SubAccount },
  'GET /v1/sub-accounts/:id': { 200: SubAccount },
  'GET /v1/sub-accounts/:id/statement': { 200: Statement },
  'POST /v1/keys': { 200: IssuedKey },
  'GET /v1/keys': { 200: KeyList },
  'POST /v1/keys/:key_id/rotate': { 200: RotatedKey },
  'POST /v1/sub-accounts/:id/keys': { 200: IssuedKey },
  'GET /v1/sub-accounts/:id/keys': { 200: KeyList },
  'POST /v1/sub-accounts/:id/keys/:key_id/rotate': { 200: RotatedKey },
  'GET /v1/files': { 200: z.looseObject({ object: z.literal('list'), data: z.array(FileObject) }) },
  'POST /v1/files': { 200: FileObject },
  'GET /v1/files/:id': { 200: FileObject },
  'GET /v1/usage/by-tag': {
    200: z.looseObject({ month: Month, data: z.array(UsageRow.extend({ tag: z.string() })) }),
  },
  'GET /v1/usage/by-sub-account': {
    200: z.looseObject({
      month: Month,
      data: z.array(
        UsageRow.extend({
          sub_account_id: z.string(),
          account_cost_cents: z.number().optional(),
          margin_cents: z.number().optional(),
        }),
      ),
    }),
  },
  'GET /admin/accounts': { 200: z.looseObject({ object: z.literal('list'), data: z.array(AccountSummary) }) },
  'GET /admin/accounts/:accountId': {
    200: AccountSummary.extend({ keys: z.array(Key), balance_detail: AccountBalance }),
  },
  'GET /admin/keys': { 200: z.looseObject({ object: z.literal('list'), data: z.array(Key) }) },
  'GET /admin/accounts/:accountId/balance': { 200: AccountBalance },
  'GET /admin/accounts/:accountId/usage': {
    200: z.looseObject({
      account_id: z.string(),
      month: Month,
      total: z.looseObject(Figures),
      by_sub_account: z.array(z.looseObject({ sub_account_id: z.string(), ...Figures })),
      by_tag: z.array(z.looseObject({ tag: z.string(), ...Figures })),
    }),
  },
  'POST /admin/accounts': {
    200: z.looseObject({ account_id: z.string(), key: z.string(), key_id: z.string() }),
  },
  'GET /v1/budgets': { 200: z.looseObject({ object: z.literal('list'), data: z.array(Budget) }) },
  'POST /v1/budgets': { 200: Budget },
  'DELETE /v1/budgets/:tag': {
    200: z.looseObject({ object: z.literal('budget'), tag: z.string(), deleted: z.literal(true) }),
  },
  'POST /admin/accounts/:accountId/adjustments': {
    200: z.looseObject({
      object: z.literal('adjustment'),
      account_id: z.string(),
      reference: z.string(),
      cents: z.number().int(),
      reason: z.string(),
      reverses: z.string().nullable(),
      applied: z.boolean(),
    }),
  },
  'GET /healthz': { 200: z.object({ status: z.literal('ok') }) },
  'GET /readyz': { 200: Readiness, 503: Readiness.extend({ error: ErrorBody.shape.error }) },
};
