import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/gateway.ts';
import { type JobProviders, jobProviderEnv, startJobProviders } from '../upstreams/jobs.ts';
import { type Answer, type FaultGateway, send, startFaultGateway } from './fault-gateway.ts';

/**
 * Two accounts (A, B), each with a sub-account (SA, SB): four scopes, each owning one of every resource the
 * gateway has today. Every route that reads, changes or lists a resource is tried with the other scopes' keys.
 * Cache entries are tried apart: another scope's question must miss, and a purge reaches only the purger's scope.
 * Webhook deliveries have no read route.
 */
const NOT_BUILT: string[] = [];

interface Scope {
  name: string;
  key: string;
  family: 'A' | 'B';
  main: boolean;
  fileId: string;
  batchId: string;
  jobId: string;
  jobFile: string;
  tag: string;
  /** A chat request of the scope's, in the request log, and a replay of it. */
  requestId: string;
  replayId: string;
  /** A response of the Responses API, kept in the request log. */
  responseId: string;
  /** An eval of the scope's, whose id is also a model name (`eval:<id>`). */
  evalId: string;
  /** Main scopes only: the sub-account it manages. */
  subId?: string;
  secret?: string;
}

interface Attempt {
  by: string;
  owner: string;
  route: string;
  real: string;
  missing: string;
}

const LINE = JSON.stringify({
  custom_id: 'one',
  method: 'POST',
  url: '/v1/chat/completions',
  body: { model: 'local/echo', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] },
});

describe('tenancy: four scopes, every resource, every route, with the others’ keys', () => {
  let gateway: FaultGateway;
  let providers: JobProviders;
  const scopes: Scope[] = [];

  const call = (key: string, method: string, path: string, body?: unknown, headers = {}): Promise<Answer> =>
    send(gateway.url, {
      method,
      path,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const ok = async (answer: Promise<Answer>, what: string) => {
    const done = await answer;
    if (done.status >= 300) throw new Error(`${what}: ${done.status} ${done.text}`);
    return done.json as Record<string, string>;
  };

  async function populate(name: string, key: string, family: 'A' | 'B', main: boolean): Promise<Scope> {
    const form = new FormData();
    form.append('purpose', 'batch');
    form.append('file', new Blob([`${LINE}\n`]), `${name}.jsonl`);
    const upload = await fetch(`${gateway.url}/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    const file = (await upload.json()) as Record<string, string>;
    if (!file.id) throw new Error(`upload for ${name}: ${JSON.stringify(file)}`);
    const batch = await ok(
      call(key, 'POST', '/v1/batches', {
        input_file_id: file.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      }),
      `batch for ${name}`,
    );
    const tag = `tag-${name}-only`;
    const chat = await call(
      key,
      'POST',
      '/v1/chat/completions',
      { model: 'local/echo', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] },
      { 'x-gw-tag': tag },
    );
    const requestId = String(chat.headers['x-request-id']);
    await eventually(
      () => call(key, 'GET', `/v1/requests/${requestId}`),
      (a) => a.status === 200,
      5_000,
    );
    const replay = await ok(
      call(key, 'POST', '/v1/replays', { source_request_id: requestId, target_model: 'local/echo-pro' }),
      `replay for ${name}`,
    );
    await ok(
      call(
        key,
        'POST',
        '/v1/chat/completions',
        { model: 'local/echo', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] },
        { 'x-gw-tag': tag },
      ),
      `chat for ${name}`,
    );
    const response = await ok(
      call(key, 'POST', '/v1/responses', { model: 'local/echo', input: `hello from ${name}` }),
      `response for ${name}`,
    );
    const evaluation = await ok(
      call(key, 'POST', '/v1/evals', {
        name: `eval of ${name}`,
        candidate_models: ['local/echo', 'local/echo-pro'],
        dataset: [{ input: 'hi', expected: 'echo: hi' }],
        metric: 'quality',
      }),
      `eval for ${name}`,
    );
    const job = await ok(
      call(key, 'POST', '/v1/audio/music', { prompt: `a tune for ${name}`, duration: 5 }),
      `job for ${name}`,
    );
    const scope: Scope = {
      name,
      key,
      family,
      main,
      fileId: file.id,
      batchId: batch.id as string,
      jobId: job.id as string,
      jobFile: '',
      tag,
      requestId,
      replayId: replay.id as string,
      responseId: response.id as string,
      evalId: evaluation.id as string,
    };
    scope.secret = (await ok(call(key, 'GET', '/v1/webhook-secret'), 'secret')).secret;
    if (main) {
      await ok(call(key, 'POST', '/v1/budgets', { tag, cap_cents: 1_000 }), `budget for ${name}`);
    }
    return scope;
  }

  beforeAll(async () => {
    providers = await startJobProviders();
    gateway = await startFaultGateway({ ...jobProviderEnv(providers.url) });
    for (const family of ['A', 'B'] as const) {
      const account = (await gateway.admin('/accounts', { name: `tenant ${family}` })).json as Record<
        string,
        string
      >;
      await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 10_000, reference: 'funding' });
      await gateway.admin(`/accounts/${account.account_id}/settings`, { rate_limit_rpm: 100_000 });
      const main = await populate(family, account.key as string, family, true);
      const sub = await ok(
        call(main.key, 'POST', '/v1/sub-accounts', {
          name: `sub of ${family}`,
          spend_cap_cents: 1_000,
          rate_limit_rpm: 100_000,
        }),
        'sub-account',
      );
      main.subId = sub.id;
      scopes.push(main, await populate(`S${family}`, sub.key as string, family, false));
    }
    // Each batch's line is in the request log, under the line's id (tried below: a sub-account's batch lines are
    // its own, as its batch and files are, not its main key's).
    for (const scope of scopes) {
      await eventually(
        async () => (await call(scope.key, 'GET', `/v1/requests/${scope.batchId}-1`)).status,
        (status) => status === 200,
        20_000,
      );
    }
    // Each job ends with a stored result, whose signed-URL route is tried below too.
    for (const scope of scopes) {
      const job = await eventually(
        async () => (await call(scope.key, 'GET', `/v1/jobs/${scope.jobId}`)).json as Record<string, string>,
        (j) => j.status === 'completed' || j.status === 'failed',
        20_000,
      );
      scope.jobFile = (job.result_url ?? '').split('?')[0]?.split('/').pop() ?? 'result.mp3';
    }
  });
  afterAll(async () => {
    await gateway?.stop();
    await providers?.close();
  });

  it('answers another scope’s id exactly as a missing one (404), and lists nothing of another’s', async () => {
    const routes = (o: Scope): [string, string, string, unknown?][] => [
      ['GET', `/v1/files/${o.fileId}`, 'file'],
      ['GET', `/v1/files/${o.fileId}/content`, 'file content'],
      ['DELETE', `/v1/files/${o.fileId}`, 'file delete'],
      [
        'POST',
        '/v1/batches',
        'batch from another’s file',
        { input_file_id: o.fileId, endpoint: '/v1/chat/completions', completion_window: '24h' },
      ],
      ['GET', `/v1/batches/${o.batchId}`, 'batch'],
      ['POST', `/v1/batches/${o.batchId}/cancel`, 'batch cancel'],
      ['GET', `/v1/jobs/${o.jobId}`, 'job'],
      ['DELETE', `/v1/jobs/${o.jobId}`, 'job cancel'],
      ['GET', `/v1/files/jobs/${o.jobId}/${o.jobFile}/signed`, 'job result URL'],
      ['GET', `/v1/requests/${o.requestId}`, 'logged request'],
      ['GET', `/v1/requests/${o.batchId}-1`, 'logged batch line'],
      [
        'POST',
        '/v1/replays',
        'replay of another’s batch line',
        { source_request_id: `${o.batchId}-1`, target_model: 'local/echo-pro' },
      ],
      ['GET', `/v1/replays/${o.replayId}`, 'replay'],
      ['DELETE', `/v1/replays/${o.replayId}`, 'replay stop'],
      ['GET', `/v1/responses/${o.responseId}`, 'response'],
      ['GET', `/v1/responses/${o.responseId}/input_items`, 'response input items'],
      [
        'POST',
        '/v1/responses',
        'continuing another’s response',
        { model: 'local/echo', input: 'go on', previous_response_id: o.responseId },
      ],
      ['DELETE', `/v1/responses/${o.responseId}`, 'response delete'],
      ['GET', `/v1/evals/${o.evalId}`, 'eval'],
      ['GET', `/v1/evals/${o.evalId}/items`, 'eval answers'],
      ['POST', `/v1/evals/${o.evalId}/cancel`, 'eval cancel'],
      ['POST', `/v1/evals/${o.evalId}/rerun`, 'eval rerun'],
      [
        'POST',
        '/v1/chat/completions',
        'eval as a model',
        { model: `eval:${o.evalId}`, max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] },
      ],
      [
        'POST',
        '/v1/replays',
        'replay of another’s request',
        { source_request_id: o.requestId, target_model: 'local/echo-pro' },
      ],
      ...(o.subId
        ? ([
            ['GET', `/v1/sub-accounts/${o.subId}`, 'sub-account'],
            [
              'PATCH',
              `/v1/sub-accounts/${o.subId}`,
              'sub-account update',
              { name: 'taken over', spend_cap_cents: 999_999 },
            ],
            ['GET', `/v1/sub-accounts/${o.subId}/usage`, 'sub-account usage'],
            ['DELETE', `/v1/sub-accounts/${o.subId}`, 'sub-account delete'],
          ] as [string, string, string, unknown?][])
        : []),
    ];
    // The same id with its last characters changed (before a batch line's `-<line>`): the same shape, owned by nobody.
    // The last four hex digits changed: to ffff, or to 0000 for an id that happens to end in ffff already.
    const missing = (text: string) =>
      text.replace(/[0-9a-f]{4}(?=((-\d+)?($|\/|")))/g, (digits) => (digits === 'ffff' ? '0000' : 'ffff'));
    const leaks: Attempt[] = [];
    let attempts = 0;
    for (const owner of scopes) {
      for (const by of scopes) {
        if (by === owner) continue;
        for (const [method, path, route, body] of routes(owner)) {
          // docs/jobs.md: an account's main key sees (and may cancel) every job of the account, its sub-accounts' too;
          // likewise its sub-accounts' logged requests, replays, responses and evals (docs/requests.md,
          // docs/responses.md, docs/evals.md); but not their batches, files, and batch lines (docs/requests.md).
          const accountWide =
            (['/jobs/', '/requests/', '/replays', '/responses', '/evals'].some((part) =>
              path.includes(part),
            ) ||
              route === 'eval as a model') &&
            !route.includes('batch line');
          if (accountWide && by.main && by.family === owner.family) continue;
          const real = await call(by.key, method, path, body);
          const ghostBody = body === undefined ? undefined : JSON.parse(missing(JSON.stringify(body)));
          if (missing(path) === path && ghostBody === undefined)
            throw new Error(`no missing twin for ${path}`);
          const ghost = await call(by.key, method, missing(path), ghostBody);
          attempts++;
          const errorType = (a: Answer) => (a.json as { error?: { type?: string } })?.error?.type;
          const same = real.status === ghost.status && errorType(real) === errorType(ghost);
          if (!same || (real.status !== 404 && real.status !== 403)) {
            leaks.push({
              by: by.name,
              owner: owner.name,
              route: `${method} ${path} (${route})`,
              real: `${real.status} ${real.text.slice(0, 160)}`,
              missing: `${ghost.status} ${ghost.text.slice(0, 160)}`,
            });
          }
        }
      }
    }

    // Lists: a scope sees its own items (a main key also its sub-account's usage), never another's.
    const foreign = (viewer: Scope) => [
      // A main key's sub-account's batch lines are not its own.
      ...scopes
        .filter((s) => s !== viewer && viewer.main && s.family === viewer.family)
        .map((s) => `${s.batchId}-1`),
      ...scopes
        .filter((s) => s !== viewer && !(viewer.main && s.family === viewer.family))
        .flatMap((s) => [
          s.fileId,
          s.batchId,
          s.jobId,
          s.tag,
          s.requestId,
          s.replayId,
          s.evalId,
          ...(s.subId && s.family !== viewer.family ? [s.subId] : []),
        ]),
    ];
    const listLeaks: string[] = [];
    for (const viewer of scopes) {
      // Usage is projected from the log: wait until the viewer's own request shows.
      await eventually(
        async () => (await call(viewer.key, 'GET', '/v1/usage/by-tag')).text,
        (text) => text.includes(viewer.tag),
        10_000,
      );
      const lists = [
        '/v1/files',
        '/v1/batches',
        '/v1/usage/by-tag',
        '/v1/usage/by-sub-account',
        '/v1/usage/by-model',
        '/v1/jobs',
        '/v1/balance',
        '/v1/requests?limit=100',
        '/v1/replays',
        '/v1/evals',
      ];
      if (viewer.main) lists.push('/v1/sub-accounts');
      for (const list of lists) {
        const answer = await call(viewer.key, 'GET', list);
        // The request log keeps the viewer's own refused tries, whose error message repeats the id it sent (as a
        // missing id's does): an echo of its own input, not another scope's data.
        const text = list.startsWith('/v1/requests') ? withoutErrorMessages(answer.json) : answer.text;
        for (const id of foreign(viewer))
          if (text.includes(id)) listLeaks.push(`${viewer.name} ${list} shows ${id}`);
      }
    }

    // Nothing another scope tried changed anything: every resource is still its owner's, as it was.
    const damaged: string[] = [];
    for (const o of scopes) {
      if ((await call(o.key, 'GET', `/v1/files/${o.fileId}`)).status !== 200) damaged.push(`${o.name} file`);
      const batch = (await call(o.key, 'GET', `/v1/batches/${o.batchId}`)).json as { status?: string };
      if (!batch.status || batch.status.startsWith('cancel')) damaged.push(`${o.name} batch ${batch.status}`);
      const job = (await call(o.key, 'GET', `/v1/jobs/${o.jobId}`)).json as { status?: string };
      if (job.status !== 'completed') damaged.push(`${o.name} job ${job.status}`);
      const evaluation = (await call(o.key, 'GET', `/v1/evals/${o.evalId}`)).json as {
        status?: string;
        run?: number;
      };
      if (evaluation.status === 'cancelled' || evaluation.run !== 1)
        damaged.push(`${o.name} eval ${evaluation.status} run ${evaluation.run}`);
      if (o.subId) {
        const sub = (await call(o.key, 'GET', `/v1/sub-accounts/${o.subId}`)).json as { name?: string };
        if (sub.name !== `sub of ${o.family}`) damaged.push(`${o.name} sub-account ${JSON.stringify(sub)}`);
      }
    }
    // Keys' webhook secrets are their own: rotating one leaves the others as they were.
    const [first, ...others] = scopes as [Scope, ...Scope[]];
    await call(first.key, 'POST', '/v1/webhook-secret/rotate');
    for (const o of others) {
      const now = (await call(o.key, 'GET', '/v1/webhook-secret')).json as { secret?: string };
      if (now.secret !== o.secret)
        damaged.push(`${o.name} webhook secret changed by ${first.name}'s rotation`);
    }
    if (new Set(scopes.map((s) => s.secret)).size !== scopes.length)
      damaged.push('two keys share a webhook secret');
    // B's budget on A's tag name is B's alone: A's requests under that tag still go through.
    const [a, , b] = scopes as [Scope, Scope, Scope];
    await call(b.key, 'POST', '/v1/budgets', { tag: a.tag, cap_cents: 0 });
    const underCap = await call(
      a.key,
      'POST',
      '/v1/chat/completions',
      { model: 'local/echo', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] },
      { 'x-gw-tag': a.tag },
    );
    if (underCap.status !== 200) damaged.push(`B's budget on ${a.tag} refused A: ${underCap.status}`);

    console.log(
      `FAULTS tenancy scopes=${scopes.length} cross_attempts=${attempts} leaks=${leaks.length} list_leaks=${listLeaks.length} ` +
        `damaged=${damaged.length} not_built=${NOT_BUILT.join(',')}`,
    );
    for (const l of leaks.slice(0, 20))
      console.log(
        `FAULTS tenancy leak ${l.by} on ${l.owner}'s ${l.route}: ${l.real} | missing id: ${l.missing}`,
      );
    for (const l of [...listLeaks, ...damaged].slice(0, 20)) console.log(`FAULTS tenancy ${l}`);
    expect(leaks).toEqual([]);
    expect(listLeaks).toEqual([]);
    expect(damaged).toEqual([]);
  });

  it('never serves one scope’s cached answer to another, and a purge reaches only the purger’s scope', async () => {
    const ask = async (by: Scope, owner: Scope) => {
      const answer = await call(by.key, 'POST', '/v1/chat/completions', {
        model: 'local/echo',
        max_tokens: 16,
        cache: 'force',
        messages: [{ role: 'user', content: `what ${owner.name} asked the cache` }],
      });
      return `${answer.status} ${answer.headers['x-cache-status']}`;
    };
    const served: string[] = [];
    for (const owner of scopes) {
      if ((await ask(owner, owner)) !== '200 miss') served.push(`${owner.name} first ask`);
      if ((await ask(owner, owner)) !== '200 hit; type=exact')
        served.push(`${owner.name} not served its own`);
    }
    // Each other scope asks each owner's question once: always a miss, never the owner's answer.
    for (const owner of scopes)
      for (const by of scopes)
        if (by !== owner && (await ask(by, owner)) !== '200 miss')
          served.push(`${by.name} was served ${owner.name}'s answer`);
    // Purges by the other family and by a sub-account leave A's own entry; A's purge takes SA's too.
    const [a, sa, b, sb] = scopes as [Scope, Scope, Scope, Scope];
    for (const purger of [b, sb, sa]) await call(purger.key, 'DELETE', '/v1/cache');
    if ((await ask(a, a)) !== '200 hit; type=exact')
      served.push(`a purge by another scope dropped A's entry`);
    if ((await ask(b, b)) !== '200 miss') served.push(`B's purge left B's entry`);
    await call(a.key, 'DELETE', '/v1/cache');
    if ((await ask(sa, sa)) !== '200 miss') served.push(`A's purge left SA's entry`);
    if ((await ask(sb, b)) !== '200 miss') served.push(`A's purge changed what SB holds`);
    console.log(`FAULTS tenancy cache scopes=${scopes.length} findings=${served.length}`);
    for (const line of served.slice(0, 20)) console.log(`FAULTS tenancy cache ${line}`);
    expect(served).toEqual([]);
  });
});

function withoutErrorMessages(listing: unknown): string {
  const rows = (listing as { data?: Record<string, unknown>[] }).data ?? [];
  return JSON.stringify(rows.map(({ error_message: _, ...row }) => row));
}
