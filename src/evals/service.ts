import { randomBytes } from 'node:crypto';
import type { z } from 'zod';
import { EvalCommands } from '../../commands/eval/handler.ts';
import type { EvalCreated } from '../../events/eval.ts';
import type { EventStore } from '../../events/store.ts';
import { type EvalRow, evalRow, listEvalAnswers, listEvals } from '../../projections/evals/index.ts';
import type { Sql } from '../../projections/types.ts';
import type { KeyHolder } from '../accounts/live-state.ts';
import { permitModel } from '../accounts/model-access.ts';
import type { ChatDeps } from '../chat/complete.ts';
import { resolveChatModel } from '../chat/models.ts';
import { isValidTag, requestTag } from '../chat/request.ts';
import { RequestRefused } from '../contracts/errors.ts';
import { projectedUpTo } from '../projections/wait.ts';
import { judgeModel } from '../replays/judge.ts';
import { type CreateEvalRequest, EVAL_LIMITS, unknownVariables } from './request.ts';
import { toEvalItemObject, toEvalObject } from './view.ts';

export interface EvalServiceDeps {
  store: EventStore;
  sql: Sql;
  chat: ChatDeps;
  clock: () => Date;
  /** Tells the worker a run is queued, so it starts without waiting for its next look. */
  nudge: () => void;
}

/** The alias prefix: `eval:<eval id>` names the eval's winner as a model. */
export const EVAL_ALIAS = 'eval:';

/** Evals: recorded on `eval-{id}`, run by the eval worker, read from the `evals` read model. */
export class EvalService {
  readonly commands: EvalCommands;

  constructor(private readonly deps: EvalServiceDeps) {
    this.commands = new EvalCommands(deps.store);
  }

  async create(
    auth: KeyHolder,
    requestId: string,
    tagHeader: string | string[] | undefined,
    input: CreateEvalRequest,
  ) {
    if (!isValidTag(tagHeader))
      throw new RequestRefused('invalid', "'x-gw-tag': 1 to 128 printable characters");
    const candidates = this.candidates(input.candidate_models);
    this.checkCriteria(input.testing_criteria);
    // Every call of the eval is the key's own: its candidates and graders are models it may use.
    const allowed = this.deps.chat.spending.allowedModels(auth);
    for (const id of candidates) permitModel(allowed, id, { field: 'candidate_models' });
    for (const [k, criterion] of (input.testing_criteria ?? []).entries()) {
      if (criterion.type !== 'score_model') continue;
      const id = this.chatModel(criterion.model, [], []) ?? criterion.model;
      permitModel(allowed, id, { named: criterion.model, field: `testing_criteria.${k}.model` });
    }
    const dataset = input.dataset.map((item) => ({ input: item.input, expected: item.expected ?? null }));
    if (JSON.stringify(dataset).length > EVAL_LIMITS.maxDatasetBytes) {
      throw new RequestRefused(
        'invalid',
        `'dataset': at most ${EVAL_LIMITS.maxDatasetBytes / 1024 / 1024} MB as JSON; split it into several evals`,
      );
    }
    const evalId = `evl_${randomBytes(12).toString('hex')}`;
    const created: z.infer<typeof EvalCreated> = {
      evalId,
      accountId: auth.accountId,
      subAccountId: auth.subAccountId,
      keyId: auth.keyId,
      requestId,
      name: input.name,
      candidateModels: candidates,
      metric: input.metric,
      dataset,
      maxTokens: input.max_tokens ?? null,
      testingCriteria: input.testing_criteria ?? null,
      tag: requestTag(tagHeader, null) ?? 'eval',
      judgeModel: input.testing_criteria ? null : (judgeModel(this.deps.chat, allowed) ?? null),
    };
    const decision = await this.commands.handle(
      evalId,
      { type: 'CreateEval', created },
      { now: this.deps.clock(), correlationId: requestId },
    );
    this.deps.nudge();
    return this.after(auth, evalId, decision.checkpoint);
  }

  async get(auth: KeyHolder, evalId: string) {
    return toEvalObject(await this.owned(auth, evalId));
  }

  async list(auth: KeyHolder, query: { limit: number; after?: string }) {
    const rows = await listEvals(this.deps.sql, auth.accountId, query, auth.subAccountId);
    const page = rows.slice(0, query.limit).map(toEvalObject);
    return {
      object: 'list' as const,
      data: page,
      first_id: page[0]?.id ?? null,
      last_id: page.at(-1)?.id ?? null,
      has_more: rows.length > query.limit,
    };
  }

  /** A run's answers with their grading, by item then model; the current run unless `run` names another. */
  async items(
    auth: KeyHolder,
    evalId: string,
    query: { run?: number; model?: string; limit: number; after?: string },
  ) {
    const row = await this.owned(auth, evalId);
    const run = query.run ?? row.run;
    if (run > row.run)
      throw new RequestRefused('invalid', `'run': eval '${evalId}' has runs 1 to ${row.run}`);
    const rows = await listEvalAnswers(this.deps.sql, evalId, { ...query, run });
    const page = rows.slice(0, query.limit).map(toEvalItemObject);
    return {
      object: 'list' as const,
      data: page,
      first_id: page[0]?.id ?? null,
      last_id: page.at(-1)?.id ?? null,
      has_more: rows.length > query.limit,
    };
  }

  /** Stops the current run; its answers so far stay recorded and charged. Ended runs are left as they are. */
  async cancel(auth: KeyHolder, evalId: string, requestId: string) {
    await this.owned(auth, evalId);
    const decision = await this.commands.handle(
      evalId,
      { type: 'CancelRun' },
      { now: this.deps.clock(), correlationId: requestId },
    );
    return this.after(auth, evalId, decision.checkpoint);
  }

  /** Queues the eval's next run over the same candidates and dataset; 409 while a run is unfinished. */
  async rerun(auth: KeyHolder, evalId: string, requestId: string) {
    const row = await this.owned(auth, evalId);
    const allowed = this.deps.chat.spending.allowedModels(auth);
    for (const id of row.candidate_models) permitModel(allowed, id, { field: 'candidate_models' });
    const decision = await this.commands.handle(
      evalId,
      { type: 'Rerun', requestId },
      { now: this.deps.clock(), correlationId: requestId },
    );
    this.deps.nudge();
    return this.after(auth, evalId, decision.checkpoint);
  }

  /**
   * The model `eval:<id>` stands for: the winner of the eval's newest completed run. An eval the caller cannot see
   * is an unknown model (404); one with no completed run yet is 409 `eval_not_ready`, with its progress.
   */
  async resolveAlias(auth: KeyHolder, model: string): Promise<{ model: string; evalId: string }> {
    const evalId = model.slice(EVAL_ALIAS.length);
    const row =
      evalId === '' ? undefined : await evalRow(this.deps.sql, auth.accountId, evalId, auth.subAccountId);
    if (!row)
      throw new RequestRefused(
        'model_not_found',
        `The model '${model}' does not exist (no eval '${evalId}')`,
      );
    if (row.winner_model !== null) {
      // The winner is called with the caller's key, so it must be a model that key may use now.
      permitModel(this.deps.chat.spending.allowedModels(auth), row.winner_model, {
        named: `${model}'s winner`,
      });
      return { model: row.winner_model, evalId };
    }
    const progress = `${row.items_done} of ${row.items_total} items done`;
    const why =
      row.status === 'completed'
        ? `completed without a winner (${(row.result as { reason?: string } | null)?.reason ?? 'no candidate qualified'}); rerun it or name a model`
        : row.status === 'failed' || row.status === 'cancelled'
          ? `${row.status} (${progress}) before any run completed; rerun it with POST /v1/evals/${evalId}/rerun`
          : `${row.status}: ${progress}; its winner is known once it completes`;
    throw new RequestRefused('eval_not_ready', `Eval '${evalId}' is ${why}`);
  }

  private after = async (auth: KeyHolder, evalId: string, checkpoint: string | undefined) => {
    if (checkpoint) await projectedUpTo(this.deps.sql, this.deps.store, 'evals', checkpoint);
    return this.get(auth, evalId);
  };

  private async owned(auth: KeyHolder, evalId: string): Promise<EvalRow> {
    const row = await evalRow(this.deps.sql, auth.accountId, evalId, auth.subAccountId);
    if (!row) throw new RequestRefused('not_found', `No eval with id '${evalId}'`);
    return row;
  }

  /** Chat models the gateway can reach, by their catalog ids; every one that is not is named in one refusal. */
  private candidates(models: string[]): string[] {
    const unknown: string[] = [];
    const refused: string[] = [];
    const ids: string[] = [];
    for (const model of models) {
      const id = this.chatModel(model, unknown, refused);
      if (id === undefined) continue;
      if (ids.includes(id)) refused.push(`'${model}' is listed twice`);
      else ids.push(id);
    }
    const problems = [
      ...(unknown.length > 0 ? [`unknown models ${unknown.map((m) => `'${m}'`).join(', ')}`] : []),
      ...refused,
    ];
    if (problems.length > 0)
      throw new RequestRefused('invalid', `'candidate_models': ${problems.join('; ')}`);
    if (ids.length < EVAL_LIMITS.minCandidates) {
      throw new RequestRefused(
        'invalid',
        `'candidate_models': give ${EVAL_LIMITS.minCandidates} to ${EVAL_LIMITS.maxCandidates} different models`,
      );
    }
    return ids;
  }

  private chatModel(model: string, unknown: string[], refused: string[]): string | undefined {
    if (model === 'auto' || model.startsWith('auto/') || model.startsWith(EVAL_ALIAS)) {
      refused.push(`'${model}' is not a model but a choice of one; name the models to compare`);
      return undefined;
    }
    const { catalog, env, timeoutMs } = this.deps.chat;
    try {
      return resolveChatModel(catalog, env, timeoutMs, model).model.id;
    } catch (error) {
      if (!(error instanceof RequestRefused)) throw error;
      if (error.kind === 'model_not_found') unknown.push(model);
      else refused.push(error.message.replace(/^'model': /, ''));
      return undefined;
    }
  }

  private checkCriteria(criteria: CreateEvalRequest['testing_criteria']): void {
    for (const [k, criterion] of (criteria ?? []).entries()) {
      const templates: [string, string][] =
        criterion.type === 'score_model'
          ? criterion.input.map((m, i) => [`input.${i}.content`, m.content])
          : [
              ['input', criterion.input],
              ['reference', criterion.reference],
            ];
      for (const [field, template] of templates) {
        const unknownNames = unknownVariables(template);
        if (unknownNames.length > 0) {
          throw new RequestRefused(
            'invalid',
            `'testing_criteria.${k}.${field}': unknown variable {{${unknownNames[0]}}}; use {{item.input}}, {{item.expected}} or {{sample.output_text}}`,
          );
        }
      }
      if (criterion.type === 'score_model') {
        const unknownModels: string[] = [];
        const refused: string[] = [];
        this.chatModel(criterion.model, unknownModels, refused);
        if (unknownModels.length > 0 || refused.length > 0) {
          const why = unknownModels.length > 0 ? `the model '${criterion.model}' does not exist` : refused[0];
          throw new RequestRefused('invalid', `'testing_criteria.${k}.model': ${why}`);
        }
        const range = criterion.range ?? [0, 1];
        if (!(range[0] < range[1])) {
          throw new RequestRefused(
            'invalid',
            `'testing_criteria.${k}.range': give [low, high] with low < high`,
          );
        }
      }
    }
  }
}
