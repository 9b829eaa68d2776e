/**
 * The gateway's route table as the fault suite sees it: every registered route with a valid body to mutate and
 * the credential it takes. `registeredRoutes` reads the table from a live Fastify app, and `uncovered` names the
 * routes registered there but missing here, so a new route cannot escape the fuzzer.
 */
export interface Route {
  method: string;
  /** Fastify's path: `:name` parameters, `*` a wildcard. */
  path: string;
  /** A body the route accepts (or nearly), which the fuzzer mutates; undefined for routes without one. */
  body?: Record<string, unknown>;
  /** Sent as multipart/form-data rather than JSON. */
  multipart?: boolean;
  credential: 'key' | 'admin' | 'none';
}

const chat = { model: 'local/echo', max_tokens: 16, messages: [{ role: 'user', content: 'hello' }] };
const tinyPng =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

const key = (method: string, path: string, body?: Record<string, unknown>, multipart = false): Route => ({
  method,
  path: `/v1${path}`,
  body,
  multipart,
  credential: 'key',
});
const admin = (method: string, path: string, body?: Record<string, unknown>): Route => ({
  method,
  path: `/admin${path}`,
  body,
  credential: 'admin',
});

export const ROUTES: Route[] = [
  key('GET', '/balance'),
  key('POST', '/batches', {
    input_file_id: ':fileId',
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
  }),
  key('GET', '/batches'),
  key('GET', '/batches/:id'),
  key('POST', '/batches/:id/cancel'),
  key('POST', '/budgets', { tag: 'fuzz', cap_cents: 100 }),
  key('GET', '/budgets'),
  key('DELETE', '/budgets/:tag'),
  key('POST', '/keys', { name: 'fuzz', expires_at: 4_102_444_800 }),
  key('GET', '/keys'),
  key('DELETE', '/keys/:key_id'),
  key('POST', '/keys/:key_id/rotate', { grace_seconds: 60 }),
  key('DELETE', '/cache'),
  key('POST', '/provider-keys', { provider: 'openai', api_key: 'sk-fuzz-0000', name: 'fuzz' }),
  key('GET', '/provider-keys'),
  key('DELETE', '/provider-keys/:id'),
  key('POST', '/chat/completions', chat),
  key('POST', '/classifications', { model: 'local/echo', input: ['hello'], labels: ['a', 'b'] }),
  key('GET', '/capabilities'),
  key('POST', '/messages', chat),
  key('POST', '/routing/preview', { ...chat, model: 'auto' }),
  key('POST', '/messages/count_tokens', { model: 'local/echo', messages: chat.messages }),
  key('POST', '/responses', { model: 'local/echo', input: 'hello', max_output_tokens: 16 }),
  key('GET', '/responses/:id'),
  key('GET', '/responses/:id/input_items'),
  key('DELETE', '/responses/:id'),
  key('POST', '/completions', { model: 'local/echo', prompt: 'hello' }),
  key('POST', '/moderations', { input: 'hello' }),
  key('GET', '/models'),
  key('GET', '/models/:provider'),
  key('GET', '/models/:provider/*'),
  key('POST', '/embeddings', { model: 'openai/text-embedding-3-small', input: 'hello' }),
  key('POST', '/rerank', { model: 'cohere/rerank-v3.5', query: 'q', documents: ['a', 'b'] }),
  key('GET', '/realtime'),
  key('POST', '/translations', { text: 'hello', source_lang: 'auto', target_lang: 'de' }),
  key('POST', '/detections', { image: tinyPng }),
  key('POST', '/ocr', {
    model: 'mistral/mistral-ocr-latest',
    document: { type: 'image_url', image_url: tinyPng },
  }),
  key('POST', '/images/generations', { model: 'openai/dall-e-3', prompt: 'a cat' }),
  key('POST', '/images/edits', { model: 'openai/dall-e-2', prompt: 'a cat' }, true),
  key('POST', '/audio/transcriptions', { model: 'openai/whisper-1' }, true),
  key('POST', '/audio/speech', { model: 'openai/tts-1', input: 'hello', voice: 'alloy' }),
  key('POST', '/audio/music', { prompt: 'a tune' }),
  key('POST', '/videos/generations', { prompt: 'a scene' }),
  key('POST', '/3d/generations', { prompt: 'a chair' }),
  key('GET', '/jobs'),
  key('GET', '/jobs/:id'),
  key('DELETE', '/jobs/:id'),
  key('POST', '/files', { purpose: 'batch', file: 'line' }, true),
  key('GET', '/files'),
  key('GET', '/files/jobs/:jobId/:filename/signed'),
  key('GET', '/files/:id'),
  key('DELETE', '/files/:id'),
  key('GET', '/files/:id/content'),
  key('GET', '/health/providers'),
  key('POST', '/sub-accounts', { name: 'fuzz', spend_cap_cents: 100 }),
  key('GET', '/sub-accounts'),
  key('GET', '/sub-accounts/:id'),
  key('PATCH', '/sub-accounts/:id', { name: 'renamed', default_tag: 'x' }),
  key('DELETE', '/sub-accounts/:id'),
  key('GET', '/sub-accounts/:id/usage'),
  key('GET', '/sub-accounts/:id/statement'),
  key('POST', '/sub-accounts/:id/keys', { name: 'fuzz' }),
  key('GET', '/sub-accounts/:id/keys'),
  key('DELETE', '/sub-accounts/:id/keys/:key_id'),
  key('POST', '/sub-accounts/:id/keys/:key_id/rotate', { grace_seconds: 60 }),
  key('GET', '/usage/by-tag'),
  key('GET', '/usage/by-sub-account'),
  key('GET', '/usage/by-model'),
  key('GET', '/requests'),
  key('GET', '/requests/:id'),
  key('POST', '/replays', { source_request_id: 'req_does_not_exist', target_model: 'local/echo-pro' }),
  key('GET', '/replays'),
  key('GET', '/replays/:id'),
  key('DELETE', '/replays/:id'),
  key('POST', '/evals', {
    name: 'fuzz',
    candidate_models: ['local/echo', 'local/echo-pro'],
    dataset: [{ input: 'hello', expected: 'echo: hello' }],
    metric: 'quality',
  }),
  key('GET', '/evals'),
  key('GET', '/evals/:id'),
  key('GET', '/evals/:id/items'),
  key('POST', '/evals/:id/cancel'),
  key('POST', '/evals/:id/rerun'),
  key('GET', '/webhook-secret'),
  key('POST', '/webhook-secret/rotate'),
  { method: 'GET', path: '/media/*', credential: 'none' },
  // The MCP endpoint (JSON-RPC; docs/mcp.md): a tool call through to a /v1 twin.
  {
    method: 'POST',
    path: '/mcp',
    body: {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'chat', arguments: { model: 'local/echo', prompt: 'hello' } },
    },
    credential: 'key',
  },
  { method: 'GET', path: '/mcp', credential: 'key' },
  { method: 'DELETE', path: '/mcp', credential: 'key' },
  admin('GET', '/health'),
  admin('GET', '/reconciliation'),
  admin('POST', '/reconciliation', { provider: 'openai', day: '2026-01-01' }),
  admin('GET', '/providers/credentials'),
  admin('GET', '/providers/:provider/credentials'),
  admin('POST', '/providers/:provider/credentials/:name', { in_rotation: true }),
  admin('POST', '/providers/:provider/credentials', { name: 'fuzzed', key: 'sk-fuzzed-key', weight: 1 }),
  admin('PATCH', '/providers/:provider/credentials/:name', { weight: 2, rpm: null }),
  admin('DELETE', '/providers/:provider/credentials/:name'),
  admin('POST', '/accounts', { name: 'fuzzed' }),
  admin('POST', '/accounts/:accountId/keys'),
  admin('POST', '/accounts/:accountId/settings', { rate_limit_rpm: 1000, balance_low_cents: 10 }),
  admin('POST', '/accounts/:accountId/routing', { allowed: ['local/*'], excluded: [] }),
  admin('POST', '/accounts/:accountId/top-ups', { cents: 1, reference: 'fuzz' }),
  admin('POST', '/accounts/:accountId/adjustments', {
    cents: 1,
    reason: 'fuzz',
    reference: 'fuzz-adjustment',
  }),
  admin('POST', '/accounts/:accountId/webhook-endpoint', { url: null }),
  admin('POST', '/keys/:keyId/revoke'),
  admin('POST', '/keys/:keyId/rotate', { grace_seconds: 60 }),
  admin('GET', '/accounts'),
  admin('GET', '/accounts/:accountId'),
  admin('GET', '/accounts/:accountId/balance'),
  admin('GET', '/accounts/:accountId/usage'),
  admin('GET', '/keys'),
  { method: 'GET', path: '/healthz', credential: 'none' },
  { method: 'GET', path: '/readyz', credential: 'none' },
  { method: 'GET', path: '/metrics', credential: 'admin' },
  { method: 'GET', path: '/v1/openapi.json', credential: 'none' },
  { method: 'GET', path: '/docs', credential: 'none' },
  { method: 'GET', path: '/docs/', credential: 'none' },
  { method: 'GET', path: '/docs/static/index.html', credential: 'none' },
  { method: 'GET', path: '/docs/static/swagger-initializer.js', credential: 'none' },
  { method: 'GET', path: '/docs/*', credential: 'none' },
  { method: 'GET', path: '/docs/json', credential: 'none' },
  { method: 'GET', path: '/docs/yaml', credential: 'none' },
  ...dashboardRoutes(),
];

/** The dashboard's pages and forms (a session cookie, not a key: without one, 303 to sign-in or 401). */
function dashboardRoutes(): Route[] {
  const page = (method: string, path: string, body?: Record<string, unknown>): Route => ({
    method,
    path: `/dashboard${path}`,
    body,
    credential: 'none',
  });
  return [
    page('GET', ''),
    page('GET', '/assets/:name'),
    page('GET', '/sign-in'),
    page('POST', '/sign-in', { key: 'sk-gw-x', _token: 'x' }),
    page('POST', '/sign-out', { _csrf: 'x' }),
    page('GET', '/usage'),
    page('GET', '/usage.csv'),
    page('GET', '/requests'),
    page('GET', '/requests/:id'),
    page('POST', '/requests/:id/replay', { target_model: 'local/echo', _csrf: 'x' }),
    page('GET', '/keys'),
    page('POST', '/keys', { name: 'n', expires_in_days: '30', _csrf: 'x' }),
    page('POST', '/keys/:key_id/rotate', { grace_seconds: '60', _csrf: 'x' }),
    page('POST', '/keys/:key_id/revoke', { _csrf: 'x' }),
    page('GET', '/sub-accounts'),
    page('POST', '/sub-accounts', { name: 'n', spend_cap: '1', markup_percent: '30', _csrf: 'x' }),
    page('GET', '/sub-accounts/:id'),
    page('POST', '/sub-accounts/:id', {
      spend_cap: '1',
      spend_cap_reset: 'monthly',
      markup_percent: '30',
      price_overrides: 'local/* = 40',
      rate_limit_tpm: '1000',
      allowed_models_mode: 'list',
      allowed_models: 'local/*',
      _csrf: 'x',
    }),
    page('POST', '/sub-accounts/:id/delete', { _csrf: 'x' }),
    page('GET', '/sub-accounts/:id/statement.csv'),
    page('GET', '/sub-accounts/:id/keys'),
    page('POST', '/sub-accounts/:id/keys', { name: 'n', _csrf: 'x' }),
    page('POST', '/sub-accounts/:id/keys/:key_id/rotate', { grace_seconds: '60', _csrf: 'x' }),
    page('POST', '/sub-accounts/:id/keys/:key_id/revoke', { _csrf: 'x' }),
    page('GET', '/budgets'),
    page('POST', '/budgets', { tag: 't', cap: '1', _csrf: 'x' }),
    page('POST', '/budgets/remove', { tag: 't', _csrf: 'x' }),
    page('GET', '/webhooks'),
    page('GET', '/webhooks/:id'),
    page('POST', '/webhooks/endpoint', { url: '', _csrf: 'x' }),
    page('POST', '/webhooks/rotate', { _csrf: 'x' }),
    page('GET', '/replays'),
    page('GET', '/evals'),
    page('GET', '/billing'),
    page('POST', '/billing/top-up', { amount: '25', _csrf: 'x' }),
    page('GET', '/admin'),
    page('POST', '/admin/audit', { _csrf: 'x' }),
    {
      method: 'POST',
      path: '/webhooks/stripe',
      body: { type: 'checkout.session.completed' },
      credential: 'none',
    },
  ];
}

/**
 * `printRoutes({ commonPrefix: false })` as "METHOD path" lines (HEAD left out: Fastify adds it to every GET).
 * find-my-way prints a wildcard route under a prefix as a bare `*` at the root; `wildcards` names the real paths.
 */
export function registeredRoutes(printed: string, wildcards: string[]): string[] {
  const out: string[] = [];
  const stack: string[] = [];
  for (const line of printed.split('\n')) {
    const match = /^([│ ]*)[├└]── (.+?)(?: \(([^)]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = (match[1] as string).length / 4;
    stack.length = depth;
    const parent = stack[depth - 1] ?? '';
    const segment = match[2] as string;
    // A wildcard is printed without the slash before it.
    let path = parent + (segment === '*' && parent !== '' && !parent.endsWith('/') ? '/*' : segment);
    if (depth === 0 && path === '*') path = wildcards.shift() ?? '*';
    stack[depth] = path;
    for (const method of (match[3] ?? '').split(', ').filter(Boolean)) {
      if (method !== 'HEAD') out.push(`${method} ${path}`);
    }
  }
  return out;
}

export function uncovered(registered: string[]): string[] {
  const known = new Set(ROUTES.map((r) => `${r.method} ${r.path}`));
  return registered.filter((r) => !known.has(r));
}
