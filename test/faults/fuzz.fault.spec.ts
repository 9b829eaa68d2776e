import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type FaultGateway,
  inLanes,
  percentile,
  round,
  send,
  shapeProblem,
  startFaultGateway,
} from './fault-gateway.ts';
import { type Fixtures, makeFixtures, printLiveRoutes, resolve } from './fuzz-fixtures.ts';
import { generate } from './fuzz-requests.ts';
import { ROUTES, registeredRoutes, uncovered } from './route-table.ts';

// FAULTS_SEED replays a run (every failure report names its seed); the default keeps CI's run the same each time.
const SEED = Number(process.env.FAULTS_SEED ?? 20);
const COUNT = Number(process.env.FAULTS_FUZZ_REQUESTS ?? 5000);
const LANES = 8;
/** A refusal (4xx) is cheap: it takes no longer than this, whatever the body. */
const REFUSAL_BOUND_MS = 1000;

interface Failure {
  i: number;
  why: string;
  status: number | 'no answer';
  ms: number;
  request: string;
}

describe('the route fuzzer', () => {
  let gateway: FaultGateway;
  let fixtures: Fixtures;

  beforeAll(async () => {
    gateway = await startFaultGateway();
    fixtures = await makeFixtures(gateway);
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  it('has a template for every route the live app registers, and none for a route it does not', async () => {
    const registered = registeredRoutes(await printLiveRoutes(), ['/media/*']);
    expect(registered.length).toBeGreaterThan(40);
    expect(uncovered(registered)).toEqual([]);
    const stale = ROUTES.map((r) => `${r.method} ${r.path}`).filter((r) => !registered.includes(r));
    expect(stale).toEqual([]);
  });

  /** The gateway's own log of a failed request: the cause of a 500, for the report. */
  const loggedError = (requestId: unknown) => {
    const line = [...gateway.server.stdout, ...gateway.server.stderr().split('\n')].find(
      (l) => typeof requestId === 'string' && l.includes(requestId),
    );
    return line ? `logged: ${line.slice(0, 400)}` : '';
  };

  it('answers every generated request without a 5xx, in the error shape, and refuses within a second', async () => {
    const requests = generate(SEED, COUNT);
    const failures: Failure[] = [];
    const statuses = new Map<number, number>();
    const refusalMs: number[] = [];
    let slowestAccepted = 0;
    const started = Date.now();
    await inLanes(requests, LANES, async (request, i) => {
      const sent = resolve(request, gateway, fixtures);
      const describe = () => {
        const body = sent.body === undefined ? '' : Buffer.from(sent.body).toString('latin1');
        const shown = body.length > 160 ? `${body.slice(0, 160)}…(${body.length} bytes)` : body;
        return `${sent.method} ${sent.path.slice(0, 160)} [${request.variant}] ${sent.headers?.['content-type'] ?? '(no content-type)'} ${JSON.stringify(shown)}`;
      };
      try {
        const answer = await send(gateway.url, sent);
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        const fail = (why: string) =>
          failures.push({ i, why, status: answer.status, ms: round(answer.ms), request: describe() });
        if (answer.status >= 500 && answer.status !== 502 && answer.status !== 504)
          fail(`${answer.text.slice(0, 200)} ${loggedError(answer.headers['x-request-id'])}`);
        const path = request.route.path;
        const format = path.startsWith('/v1/messages') ? 'anthropic' : path === '/mcp' ? 'jsonrpc' : 'openai';
        const shape = sent.method === 'HEAD' ? undefined : shapeProblem(answer, format);
        if (shape) fail(shape);
        if (answer.status >= 400) {
          refusalMs.push(answer.ms);
          if (answer.ms > REFUSAL_BOUND_MS) fail(`refused after ${Math.round(answer.ms)} ms`);
        } else slowestAccepted = Math.max(slowestAccepted, answer.ms);
      } catch (error) {
        failures.push({ i, why: String(error), status: 'no answer', ms: 0, request: describe() });
      }
    });
    const seconds = (Date.now() - started) / 1000;
    const count = (from: number, to: number) =>
      [...statuses].filter(([s]) => s >= from && s < to).reduce((sum, [, n]) => sum + n, 0);
    const fiveXx = failures.filter((f) => typeof f.status === 'number' && f.status >= 500).length;
    console.log(
      `FAULTS fuzz seed=${SEED} requests=${requests.length} routes=${ROUTES.length} seconds=${round(seconds)} ` +
        `2xx=${count(200, 300)} 4xx=${count(400, 500)} 5xx=${count(500, 600)} failing_5xx=${fiveXx} ` +
        `bad_shape=${failures.filter((f) => f.why.includes('shape') || f.why.includes('error.code') || f.why.includes('empty error')).length} ` +
        `slow_refusals=${failures.filter((f) => f.why.startsWith('refused after')).length} ` +
        `no_answer=${failures.filter((f) => f.status === 'no answer').length} ` +
        `refusal_p50_ms=${round(percentile(refusalMs, 50))} refusal_p99_ms=${round(percentile(refusalMs, 99))} ` +
        `slowest_accepted_ms=${Math.round(slowestAccepted)}`,
    );
    for (const f of failures.slice(0, 40))
      console.log(`FAULTS fuzz failure #${f.i} ${f.status} ${f.ms}ms ${f.why} :: ${f.request}`);
    expect(failures.length, `${failures.length} failures; replay with FAULTS_SEED=${SEED}`).toBe(0);
  });
});
