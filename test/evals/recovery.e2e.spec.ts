import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EvalCommands } from '../../commands/eval/handler.ts';
import { RequestBodies } from '../../src/billing/request-bodies.ts';
import { buildCatalog } from '../../src/catalog/index.ts';
import { EvalWorker } from '../../src/evals/worker.ts';
import { FsBlobStore } from '../../src/files/blob-store.ts';
import { describeError } from '../../src/http/errors.ts';
import { ProviderHealth } from '../../src/providers/health.ts';
import { requestLogReader } from '../../src/replays/request-log.ts';
import { Router } from '../../src/routing/router.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import type { Json } from '../support/json.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { Upstream } from '../upstreams/types.ts';
import { behave, CHEAP, CHEAPEST, chargedCents, dataset, EXPENSIVE, ended, JUDGE } from './support.ts';

/**
 * The window a crash can leave: a call charged (and logged) whose answer was never recorded on the eval. Made
 * here on purpose with a worker whose first record of one answer fails; its next take must read that answer back
 * from the request log instead of calling (and charging) again, or, with the bodies dropped, record it lost.
 */
let openai: Upstream;
let gateway: TestGateway;

const upstreamEnv = () => ({
  OPENAI_API_KEY: 'sk-upstream',
  OPENAI_BASE_URL: `${openai.url}/v1`,
  GATEWAY_JUDGE_MODEL: JUDGE,
});

beforeAll(async () => {
  openai = await startOpenAiUpstream();
  behave(openai);
  // The gateway's own worker looks once at start and then not for ten minutes: the test's worker runs the evals.
  gateway = await startTestGateway(upstreamEnv(), { workerIntervalsMs: { evals: 600_000 } });
});
afterAll(async () => {
  await gateway?.close();
  await openai?.close();
});

/**
 * `keep`: whether the request log keeps bodies, or a test of each body (the judge's replies dropped, say). `lost`:
 * the candidate whose answer to item 2 is charged but not recorded, beside EXPENSIVE's rival.
 */
async function runWithLostRecord(
  keep: boolean | ((body: unknown) => boolean),
  lost = EXPENSIVE,
  rival = CHEAP,
) {
  const label = typeof keep === 'boolean' ? String(keep) : 'some';
  const account = (await (
    await gateway.admin('/accounts', { name: `recovery ${label} ${lost}` })
  ).json()) as Json;
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 10_000, reference: 'p' });
  const { runtime } = gateway;
  const commands = new EvalCommands(runtime.store);
  const evalId = `evl_${randomBytes(12).toString('hex')}`;
  await commands.handle(
    evalId,
    {
      type: 'CreateEval',
      created: {
        evalId,
        accountId: account.account_id,
        subAccountId: null,
        keyId: account.key_id,
        requestId: 'test',
        name: 'recovery',
        candidateModels: [lost, rival],
        metric: 'quality',
        dataset: dataset(5),
        testingCriteria: null,
        maxTokens: null,
        tag: 'eval',
        judgeModel: JUDGE,
      },
    },
    { now: new Date() },
  );
  let failed = false;
  const faulty = {
    handle: ((id, command, context) => {
      if (
        command.type === 'RecordItem' &&
        command.scored.item === 2 &&
        command.scored.model === lost &&
        !failed
      ) {
        failed = true;
        return Promise.reject(new Error('the store went away'));
      }
      return commands.handle(id, command, context);
    }) as EvalCommands['handle'],
  } as EvalCommands;
  const blobs = new FsBlobStore(join(gateway.env.GATEWAY_DATA_DIR as string, 'blobs'));
  const reports: string[] = [];
  const catalog = buildCatalog();
  const health = new ProviderHealth();
  const worker = new EvalWorker({
    pool: runtime.database.pool,
    store: runtime.store,
    chat: {
      spending: runtime.spending,
      catalog,
      env: upstreamEnv(),
      health,
      timeoutMs: 30_000,
      maxRetryWaitMs: 0,
      fallbacks: {},
      router: new Router({ catalog, env: upstreamEnv(), health }),
    },
    spending: runtime.spending,
    bodies: keptBodies(runtime.database.pool, keep),
    log: requestLogReader(runtime.database.pool, blobs),
    commands: faulty,
    clock: () => new Date(),
    report: (line) => reports.push(line),
    intervalMs: 50,
    concurrency: 2,
    describeError,
  });
  const from = openai.requests.length;
  worker.start();
  try {
    const e = await ended(gateway, account.key, evalId);
    expect(reports.join('\n')).toContain(`${evalId}-1-2-0 was not recorded`);
    const calls = openai.requests
      .slice(from)
      .filter((r) => [lost, rival].includes(`openai/${String((r.body as { model?: unknown }).model)}`));
    // Ten answers, ten calls: the one charged but not recorded was not made again.
    expect(calls).toHaveLength(10);
    expect(await chargedCents(gateway, `${evalId}-1-`, e.cost_cents)).toBeCloseTo(e.cost_cents, 9);
    const { rows } = await runtime.database.pool.query<{ data: Json }>(
      `SELECT data FROM events WHERE stream = $1 AND type = 'EvalItemScored'`,
      [`eval-${evalId}`],
    );
    const recovered = rows.map((r) => r.data).filter((d) => d.recovered);
    expect(recovered).toHaveLength(1);
    expect(recovered[0]).toMatchObject({ item: 2, model: lost, requestId: `${evalId}-1-2-0` });
    const judged = openai.requests
      .slice(from)
      .filter((r) => `openai/${String((r.body as { model?: unknown }).model)}` === JUDGE);
    return { e, recovered: recovered[0] as Json, judged: judged.length };
  } finally {
    await worker.stop();
  }
}

/** Bodies kept by the account's setting, or body by body. */
function keptBodies(
  pool: ConstructorParameters<typeof RequestBodies>[0],
  keep: boolean | ((body: unknown) => boolean),
) {
  if (typeof keep === 'boolean') return new RequestBodies(pool, () => keep);
  return new (class extends RequestBodies {
    override save(body: unknown, kept: boolean): string | null {
      return super.save(body, kept && keep(body));
    }
  })(pool, () => true);
}

/** A reply of the judge's model, as the request log keeps a response (`{completion}`). */
const judgeReply = (body: unknown) =>
  `openai/${(body as { completion?: { model?: unknown } }).completion?.model}` === JUDGE;

describe('evals: a call charged but not recorded', () => {
  it('is read back from the request log, not called again; the run completes as if nothing happened', async () => {
    const { e, recovered } = await runWithLostRecord(true);
    expect(e).toMatchObject({
      status: 'completed',
      calls_done: 10,
      items_done: 5,
      errors: 0,
      winner_model: CHEAP,
    });
    expect(recovered).toMatchObject({ output: '4', score: 1, grader: 'exact', error: null });
    expect(BigInt(recovered.costNanos)).toBeGreaterThan(0n);
  });

  it('with its bodies dropped it is recorded lost, with its charge, and never called again', async () => {
    const { e, recovered } = await runWithLostRecord(false);
    expect(e).toMatchObject({ status: 'completed', calls_done: 10, errors: 1 });
    expect(recovered).toMatchObject({ output: null, error: { type: 'result_lost' } });
    expect(BigInt(recovered.costNanos)).toBeGreaterThan(0n);
    // The model that lost an answer did not answer every item: the other wins.
    expect(e.winner_model).toBe(CHEAP);
    expect((e.results as Json[])[0]).toMatchObject({ model: EXPENSIVE, errors: 1, eligible: false });
  });

  it('counts a judge call charged before the restart with its charge when its reply was not kept, and does not call it again', async () => {
    // CHEAPEST answers every item wrongly, so the judge grades each of its five answers; its reply to item 2 was
    // charged but, like every judge reply here, not kept.
    const { e, recovered, judged } = await runWithLostRecord(
      (body) => !judgeReply(body),
      CHEAPEST,
      EXPENSIVE,
    );
    expect(e).toMatchObject({ status: 'completed', calls_done: 10, errors: 0 });
    expect(judged).toBe(5);
    expect(recovered).toMatchObject({ output: 'no idea', grader: 'string_check', score: 0 });
    expect(BigInt((recovered.judge as Json).costNanos)).toBeGreaterThan(0n);
  });
});
