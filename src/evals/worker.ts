import type pg from 'pg';
import type { z } from 'zod';
import { chargedSoFar, type EvalState, type ItemResult, resultKey } from '../../commands/eval/decide.ts';
import type { EvalCommands } from '../../commands/eval/handler.ts';
import type { EvalCreated, EvalItemScored } from '../../events/eval.ts';
import type { EventStore } from '../../events/store.ts';
import { workChargesByPrefix } from '../../projections/balances/index.ts';
import { dueEvals, evalStatus } from '../../projections/evals/index.ts';
import type { KeyHolder } from '../accounts/live-state.ts';
import type { RequestBodies } from '../billing/request-bodies.ts';
import type { Spending } from '../billing/spending.ts';
import { type ChatDeps, completeChat } from '../chat/complete.ts';
import type { ChatCompletionRequest } from '../chat/request.ts';
import type { DescribeError } from '../contracts/errors.ts';
import { withAdvisoryLock } from '../db/advisory-lock.ts';
import { meteredContext, openRecord } from '../pipeline/record.ts';
import { recordUnsettled } from '../pipeline/unsettled.ts';
import { projectedUpTo } from '../projections/wait.ts';
import { gradingLimit, gradingSampling } from '../replays/judge.ts';
import { outputText } from '../replays/source.ts';
import type { LoggedSource, RequestLogReader } from '../replays/types.ts';
import { type AskModel, type ChatMessage, grade } from './grade.ts';
import type { TestingCriterion } from './request.ts';
import { verdict } from './stats.ts';

export interface EvalWorkerOptions {
  pool: pg.Pool;
  store: EventStore;
  chat: ChatDeps;
  spending: Spending;
  /** Where the request log keeps bodies: every call of a run is logged as a chat completion. */
  bodies: RequestBodies;
  /** Reads a logged call back after a restart, instead of calling again. */
  log: RequestLogReader;
  commands: EvalCommands;
  clock: () => Date;
  report: (line: string) => void;
  /** How often the worker looks for queued runs (a new run also wakes it at once). */
  intervalMs: number;
  /** Calls of one run in flight at once on this gateway. */
  concurrency: number;
  describeError: DescribeError;
}

/** Calls of one run in flight at once per gateway: GATEWAY_EVAL_CONCURRENCY, else 4. */
export function evalConcurrency(env: NodeJS.ProcessEnv): number {
  const given = Number(env.GATEWAY_EVAL_CONCURRENCY);
  return Number.isSafeInteger(given) && given > 0 ? Math.min(given, 64) : 4;
}

/** How often a running eval looks whether it was cancelled. */
const CANCEL_POLL_MS = 200;
const NEVER = new AbortController().signal;
/** The longest answer (and grading prompt) kept in the event; the whole one is in the request log. */
const MAX_EVENT_CHARS = 2_000;
const clipped = (text: string) =>
  text.length > MAX_EVENT_CHARS ? `${text.slice(0, MAX_EVENT_CHARS)}…` : text;
/** Looks for a logged body this many times, 100 ms apart, before counting it lost. */
const BODY_WAITS = 20;
/** A grade is one number. */
const GRADER_MAX_TOKENS = 16;

/**
 * The request id of one candidate's call on one item of a run: what it is charged and logged under. Derived from
 * the eval's id, which the gateway made; a client's `X-Request-Id` is never a request's id, so none can equal it.
 */
export const callRequestId = (evalId: string, run: number, item: number, modelIndex: number) =>
  `${evalId}-${run}-${item}-${modelIndex}`;

type Scored = z.infer<typeof EvalItemScored>;
type Created = z.infer<typeof EvalCreated>;

/** A refusal that stops the run rather than counting against one candidate: money or the key itself. */
function stopsTheRun(status: number): boolean {
  return status === 401 || status === 402 || status === 403;
}

/**
 * Works eval runs from the `evals` read model: every candidate on every item through the chat pipeline at the
 * batch price, each answer graded and recorded as an event, then the verdict. One instance at a time works a
 * run (a PostgreSQL advisory lock, gone with its connection if the instance dies). A restart resumes from the
 * recorded answers; a call that was charged but not recorded is read back from the request log, not made again.
 */
export class EvalWorker {
  private readonly controller = new AbortController();
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  /** A nudge that came while the worker was busy: it looks again at once instead of sleeping. */
  private nudged = false;

  constructor(private readonly options: EvalWorkerOptions) {}

  start(): void {
    this.loop = this.run();
  }

  /** Looks for queued runs now. */
  nudge(): void {
    this.nudged = true;
    this.wake?.();
  }

  /** Stops taking calls; the calls in flight finish and are recorded before this resolves. */
  async stop(): Promise<void> {
    this.controller.abort();
    this.wake?.();
    await this.loop;
  }

  private async run(): Promise<void> {
    const signal = this.controller.signal;
    while (!signal.aborted) {
      this.nudged = false;
      try {
        for (const evalId of await dueEvals(this.options.pool, 20)) {
          if (signal.aborted) return;
          await withAdvisoryLock(
            this.options.pool,
            `eval.${evalId}`,
            (message, error) =>
              this.options.report(error === undefined ? message : `${message}: ${String(error)}`),
            () => this.work(evalId),
          );
        }
      } catch (error) {
        this.options.report(`eval worker failed: ${String(error)}`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, this.options.intervalMs);
        this.wake = done;
        function done() {
          clearTimeout(timer);
          resolve();
        }
        if (signal.aborted || this.nudged) done();
      });
    }
  }

  private context() {
    return { now: this.options.clock() };
  }

  private async work(evalId: string): Promise<void> {
    const started = await this.options.commands.handle(evalId, { type: 'StartRun' }, this.context());
    const state = started.state;
    const created = state.created;
    if (state.status !== 'running' || !created) return;
    const charged =
      state.takes > 1 ? await this.chargedCalls(created, state.run, started.checkpoint) : new Map();
    if (charged === undefined) return; // the charges are not projected yet: the next pass resumes it
    const outcome = await this.answerAll(created, state, charged);
    if (outcome.stopped) return;
    if (outcome.refusal !== undefined) {
      const { status, body } = this.options.describeError(outcome.refusal);
      await this.options.commands.handle(
        evalId,
        { type: 'FailRun', error: { message: body.error.message, type: body.error.type, code: status } },
        this.context(),
      );
      return;
    }
    const inspected = await this.options.commands.handle(evalId, { type: 'Inspect' }, this.context());
    if (inspected.state.status !== 'running' || inspected.state.run !== state.run) return; // cancelled meanwhile
    const expected = created.dataset.length * created.candidateModels.length;
    if (inspected.state.results.size < expected) return; // an answer went unrecorded: the next pass resumes
    const byModel = new Map(created.candidateModels.map((model) => [model, [] as ItemResult[]]));
    for (const result of inspected.state.results.values()) byModel.get(result.model)?.push(result);
    const found = verdict(created.metric, created.candidateModels, byModel);
    await this.options.commands.handle(
      evalId,
      {
        type: 'CompleteRun',
        result: {
          winnerModel: found.winner,
          tie: found.tie,
          tiedModels: found.tied,
          reason: found.reason,
          costNanos: chargedSoFar(inspected.state).toString(),
          candidates: found.candidates.map((c) => ({
            model: c.model,
            n: c.n,
            scored: c.scored,
            errors: c.errors,
            meanScore: c.score?.mean ?? null,
            scoreLow: c.score?.low ?? null,
            scoreHigh: c.score?.high ?? null,
            interval: c.score?.kind ?? null,
            costNanos: c.costNanos.toString(),
            judgeCostNanos: c.judgeCostNanos.toString(),
            latencyP50Ms: c.latencyP50Ms,
            latencyP95Ms: c.latencyP95Ms,
            eligible: c.eligible,
          })),
        },
      },
      this.context(),
    );
  }

  /**
   * Every (item, candidate) without a recorded answer, `concurrency` at a time. Stops taking more when the gateway
   * stops, the run is cancelled, or a call is refused for money or the key (the calls in flight finish and are
   * recorded: they were charged).
   */
  private async answerAll(
    created: Created,
    state: EvalState,
    charged: Map<string, bigint>,
  ): Promise<{ stopped: boolean; refusal?: unknown }> {
    const inFlight = new Set<Promise<void>>();
    let refusal: unknown;
    let stopped = false;
    let checkedAt = 0;
    const halt = async (): Promise<boolean> => {
      if (this.controller.signal.aborted) return true;
      if (Date.now() - checkedAt >= CANCEL_POLL_MS) {
        checkedAt = Date.now();
        const status = await evalStatus(this.options.pool, created.evalId);
        if (status !== 'running' && status !== 'queued') return true;
      }
      return false;
    };
    outer: for (const [item] of created.dataset.entries()) {
      for (const [m, model] of created.candidateModels.entries()) {
        if (state.results.has(resultKey(item, model))) continue;
        while (inFlight.size >= this.options.concurrency) await Promise.race(inFlight);
        if (refusal !== undefined || stopped) break outer;
        if (await halt()) {
          stopped = true;
          break outer;
        }
        const requestId = callRequestId(created.evalId, state.run, item, m);
        const running: Promise<void> = this.answer(created, state.run, item, model, requestId, charged)
          .then((refused) => {
            if (refused !== undefined) refusal ??= refused;
          })
          .catch((error) => {
            stopped = true;
            this.options.report(`eval ${created.evalId} ${requestId} was not recorded: ${String(error)}`);
          })
          .finally(() => inFlight.delete(running));
        inFlight.add(running);
      }
    }
    await Promise.all(inFlight);
    return refusal !== undefined ? { stopped: false, refusal } : { stopped };
  }

  private auth(created: Created): KeyHolder {
    return {
      keyId: created.keyId,
      accountId: created.accountId,
      keyHash: '',
      subAccountId: created.subAccountId,
    };
  }

  /** One call, graded and recorded; returns the refusal when it is one that stops the run. */
  private async answer(
    created: Created,
    run: number,
    item: number,
    model: string,
    requestId: string,
    charged: Map<string, bigint>,
  ): Promise<unknown> {
    const data = created.dataset[item] as Created['dataset'][number];
    const base = { evalId: created.evalId, run, item, model, requestId };
    const ask = this.asker(created, charged);
    const prior = charged.get(requestId);
    let output: string;
    let costNanos: bigint;
    let latencyMs: number;
    let recovered = false;
    if (prior !== undefined) {
      const logged = await this.options.log.find(created, requestId);
      const bodies = logged && (await this.loggedAnswer(logged));
      if (!logged || !bodies?.response) {
        await this.record({
          ...base,
          output: null,
          score: null,
          grader: 'none',
          judge: null,
          costNanos: prior.toString(),
          latencyMs: 0,
          error: {
            message:
              'The gateway stopped after this call was charged and before its answer was recorded, and the request log kept no body to read it from; it was not called again.',
            type: 'result_lost',
            code: 500,
          },
          recovered: true,
        });
        return undefined;
      }
      output = outputText(bodies.response);
      costNanos = prior;
      latencyMs = Math.max(0, Math.round(logged.latencyMs));
      recovered = true;
    } else {
      const body: ChatCompletionRequest = {
        model,
        messages: (typeof data.input === 'string'
          ? [{ role: 'user', content: data.input }]
          : data.input) as ChatCompletionRequest['messages'],
        ...(created.maxTokens !== null && { max_tokens: created.maxTokens }),
      };
      try {
        const served = await this.complete(created, requestId, body);
        output = outputText(served.completion);
        costNanos = served.costNanos;
        latencyMs = served.latencyMs;
      } catch (error) {
        const { status, body: described } = this.options.describeError(error);
        if (stopsTheRun(status)) return error;
        await this.record({
          ...base,
          output: null,
          score: null,
          grader: 'none',
          judge: null,
          costNanos: '0',
          latencyMs: 0,
          error: { message: described.error.message, type: described.error.type, code: status },
          recovered: false,
        });
        return undefined;
      }
    }
    const graded = await grade({ input: data.input, expected: data.expected }, output, {
      judgeModel: created.judgeModel,
      criteria: created.testingCriteria as TestingCriterion[] | null,
      ask,
      requestId,
    });
    const failed = graded.failure === undefined ? undefined : this.options.describeError(graded.failure);
    await this.record({
      ...base,
      output: clipped(output),
      // An answer its grader could not grade is that answer's error, as a failed call is: it must not pass unseen.
      score: failed ? null : graded.score,
      grader: graded.grader,
      judge: graded.judge && {
        ...graded.judge,
        prompt: clipped(graded.judge.prompt),
        costNanos: graded.judge.costNanos.toString(),
      },
      costNanos: costNanos.toString(),
      latencyMs: Math.max(0, Math.round(latencyMs)),
      error: failed
        ? {
            message: `Grading this answer failed: ${failed.body.error.message}`,
            type: failed.body.error.type,
            code: failed.status,
          }
        : null,
      recovered,
    });
    if (failed && stopsTheRun(failed.status)) return graded.failure;
    return undefined;
  }

  /**
   * Grading calls: charged like the candidates'; one already charged before a restart is read back instead, and
   * when the request log kept no body of it, counted with its charge and no reply (no grade), never called again:
   * calling it again would charge it twice.
   */
  private asker(created: Created, charged: Map<string, bigint>): AskModel {
    return async (model: string, messages: ChatMessage[], requestId: string) => {
      const prior = charged.get(requestId);
      if (prior !== undefined) {
        const logged = await this.options.log.find(created, requestId);
        const bodies = logged && (await this.loggedAnswer(logged));
        return { text: bodies?.response ? outputText(bodies.response) : '', costNanos: prior };
      }
      const served = await this.complete(created, requestId, {
        model,
        messages: messages as ChatCompletionRequest['messages'],
        max_tokens: gradingLimit(this.options.chat, model, GRADER_MAX_TOKENS),
        ...gradingSampling(this.options.chat, model),
      });
      return { text: outputText(served.completion), costNanos: served.costNanos };
    };
  }

  /**
   * One chat completion of the run, at the batch price under the eval's tag, in the request log. Not stopped by
   * a shutdown: a call in flight finishes and is recorded, so it is never paid for twice.
   */
  private async complete(created: Created, requestId: string, body: ChatCompletionRequest) {
    const auth = this.auth(created);
    const log = openRecord(this.options.bodies, {
      requestId,
      auth,
      endpoint: '/v1/chat/completions',
      body,
    });
    try {
      return await completeChat(
        this.options.chat,
        meteredContext({ auth, requestId, tag: created.tag, signal: NEVER, log }),
        body,
        'batch',
      );
    } catch (error) {
      // Settled calls are logged by their settlement; a refused or failed one by the pipeline, as the edge's is.
      const { status, body: described } = this.options.describeError(error);
      await recordUnsettled(this.options.spending, log, { status, error: described.error }, (failure) =>
        this.options.report(`logging ${requestId} failed: ${String(failure)}`),
      );
      throw error;
    }
  }

  /**
   * A logged call's bodies. They are written in the background after the charge, so a body the log says was kept
   * may land a moment later; after a crash it is there or lost for good.
   */
  private async loggedAnswer(logged: LoggedSource): Promise<{ response: unknown } | undefined> {
    for (let attempt = 0; ; attempt++) {
      const bodies = await logged.bodies();
      if (bodies?.response || attempt >= BODY_WAITS) return bodies;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  private async record(scored: Scored): Promise<void> {
    await this.options.commands.handle(scored.evalId, { type: 'RecordItem', scored }, this.context());
  }

  /**
   * The calls of this run already charged (grading calls too), from the `charges` read model once it has caught
   * up with this take's start and the request log with it; undefined while they have not. They are the charges
   * the gateway recorded under the ids this run issues (`callRequestId`, and the grading calls' ids made from it):
   * only the gateway names requests, so a client's request, whatever its `X-Request-Id`, is never one of them.
   */
  private async chargedCalls(
    created: Created,
    run: number,
    startCheckpoint: string | undefined,
  ): Promise<Map<string, bigint> | undefined> {
    if (startCheckpoint === undefined) return undefined;
    for (const projection of ['balances', 'requests']) {
      const caughtUp = await projectedUpTo(
        this.options.pool,
        this.options.store,
        projection,
        startCheckpoint,
        30_000,
      );
      if (!caughtUp) return undefined;
    }
    return workChargesByPrefix(this.options.pool, created.accountId, `${created.evalId}-${run}-`);
  }
}
