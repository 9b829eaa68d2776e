import { randomBytes } from 'node:crypto';
import { DomainError } from '../../commands/errors.ts';
import { ReplayCommands } from '../../commands/replay/handler.ts';
import type { EventStore } from '../../events/store.ts';
import { listReplays, type ReplayRow, replayRow } from '../../projections/replays/index.ts';
import type { Sql } from '../../projections/types.ts';
import type { KeyHolder } from '../accounts/live-state.ts';
import { permitModel } from '../accounts/model-access.ts';
import { type ChatDeps, completeChat } from '../chat/complete.ts';
import { resolveChatModel } from '../chat/models.ts';
import { RequestRefused } from '../contracts/errors.ts';
import type { CallContext } from '../pipeline/types.ts';
import { projectedUpTo } from '../projections/wait.ts';
import { score } from './judge.ts';
import { asChatRequest, askedText, isReplayable, outputText } from './source.ts';
import { type RequestLogReader, SHADOW_DEFAULTS } from './types.ts';
import { toReplayObject } from './view.ts';

export interface ReplayDeps {
  store: EventStore;
  sql: Sql;
  chat: ChatDeps;
  log: RequestLogReader;
  clock: () => Date;
  /** The API's error for a failed target call, recorded on the replay. */
  describeError: (error: unknown) => { status: number; body: { error: { message: string; type: string } } };
}

export interface CreateReplay {
  source_request_id: string;
  target_model: string;
  shadow: boolean;
  sample_rate?: number;
  max_requests?: number;
}

/** Replays: recorded on `replay-{id}`, run through the chat pipeline, read from the `replays` read model. */
export class ReplayService {
  readonly commands: ReplayCommands;

  constructor(private readonly deps: ReplayDeps) {
    this.commands = new ReplayCommands(deps.store);
  }

  /** Runs the replay under the POST's own call context: the target call is that request's charge and log entry. */
  async create(call: CallContext, input: CreateReplay) {
    const { chat, log } = this.deps;
    const { auth, requestId } = call;
    const logged = await log.lookup(auth, input.source_request_id);
    if (!logged) {
      throw new RequestRefused('not_found', `No request with id '${input.source_request_id}'`);
    }
    const endpoint = logged.endpoint;
    if (!isReplayable(endpoint)) {
      throw new RequestRefused(
        'invalid',
        `'source_request_id': a replay re-runs /v1/chat/completions and /v1/messages requests; this one was ${endpoint}`,
      );
    }
    if (logged.model === null || logged.status < 200 || logged.status > 299) {
      throw new DomainError(
        'conflict',
        `Request '${logged.requestId}' was not served, so it has no answer to compare`,
      );
    }
    targetCheck(chat, input.target_model, chat.spending.allowedModels(auth));
    const bodies = await logged.bodies();
    if (!bodies || bodies.request == null) {
      throw new DomainError(
        'conflict',
        `The bodies of request '${logged.requestId}' were not kept (GATEWAY_REQUEST_BODIES=drop, or deleted by retention), so it cannot be replayed`,
        'source_request_id',
      );
    }
    const request = asChatRequest(endpoint, bodies.request, input.target_model);
    const replayId = `rpl_${randomBytes(12).toString('hex')}`;
    const now = () => ({ now: this.deps.clock(), correlationId: requestId });
    await this.commands.handle(
      replayId,
      {
        type: 'RequestReplay',
        replay: {
          replayId,
          accountId: auth.accountId,
          subAccountId: auth.subAccountId,
          keyId: auth.keyId,
          requestId,
          sourceRequestId: logged.requestId,
          sourceModel: logged.model,
          sourceTag: logged.tag,
          endpoint,
          targetModel: input.target_model,
          shadow: input.shadow,
          sampleRate: input.sample_rate ?? SHADOW_DEFAULTS.sampleRate,
          maxRequests: input.max_requests ?? SHADOW_DEFAULTS.maxRequests,
        },
      },
      now(),
    );
    // Billed as the caller's own request: a sub-account key's replay counts against its spend cap, as any call
    // it makes. Under the source's tag, else `replay`.
    const context: CallContext = { ...call, tag: logged.tag ?? 'replay' };
    let decision: Awaited<ReturnType<ReplayCommands['handle']>>;
    try {
      const served = await completeChat(chat, context, request);
      const sourceOutput = outputText(bodies.response);
      const targetOutput = outputText(served.completion);
      const scored = await score(chat, context, 'none', askedText(request), sourceOutput, targetOutput);
      decision = await this.commands.handle(
        replayId,
        {
          type: 'CompleteReplay',
          result: {
            replayId,
            targetRequestId: context.requestId,
            sourceOutput,
            targetOutput,
            costSourceNanos: logged.costNanos.toString(),
            costTargetNanos: served.costNanos.toString(),
            latencySourceMs: Math.max(0, Math.round(logged.latencyMs)),
            latencyTargetMs: Math.max(0, Math.round(served.latencyMs)),
            scoreDelta: scored.delta,
            scoring: scored.scoring,
            judge: scored.judge && { ...scored.judge, costNanos: scored.judge.costNanos.toString() },
          },
        },
        now(),
      );
    } catch (error) {
      const { status, body } = this.deps.describeError(error);
      const failed = await this.commands.handle(
        replayId,
        { type: 'FailReplay', error: { message: body.error.message, type: body.error.type, code: status } },
        now(),
      );
      // The client's next read sees the replay failed.
      if (failed.checkpoint)
        await projectedUpTo(this.deps.sql, this.deps.store, 'replays', failed.checkpoint);
      throw error;
    }
    return this.after(auth, replayId, decision.checkpoint);
  }

  async get(auth: KeyHolder, replayId: string) {
    return toReplayObject(await this.owned(auth, replayId));
  }

  async list(auth: KeyHolder, query: { limit: number; after?: string }) {
    const rows = await listReplays(this.deps.sql, auth.accountId, query, auth.subAccountId);
    const page = rows.slice(0, query.limit).map(toReplayObject);
    return {
      object: 'list' as const,
      data: page,
      first_id: page[0]?.id ?? null,
      last_id: page.at(-1)?.id ?? null,
      has_more: rows.length > query.limit,
    };
  }

  /** Stops a shadow; a plain replay has nothing to stop (409). */
  async stop(auth: KeyHolder, replayId: string, requestId: string) {
    await this.owned(auth, replayId);
    const decision = await this.commands.handle(
      replayId,
      { type: 'StopShadow' },
      { now: this.deps.clock(), correlationId: requestId },
    );
    return this.after(auth, replayId, decision.checkpoint);
  }

  private async after(auth: KeyHolder, replayId: string, checkpoint: string | undefined) {
    if (checkpoint) await projectedUpTo(this.deps.sql, this.deps.store, 'replays', checkpoint);
    return this.get(auth, replayId);
  }

  private async owned(auth: KeyHolder, replayId: string): Promise<ReplayRow> {
    const row = await replayRow(this.deps.sql, auth.accountId, replayId, auth.subAccountId);
    if (!row) throw new RequestRefused('not_found', `No replay with id '${replayId}'`);
    return row;
  }
}

/**
 * The target must be a chat model the gateway can reach and the key may use; the refusal names the field, and the
 * endpoint or key.
 */
function targetCheck(chat: ChatDeps, model: string, allowed: readonly string[] | null): void {
  try {
    const target = resolveChatModel(chat.catalog, chat.env, chat.timeoutMs, model);
    permitModel(allowed, target.model.id, { named: model, field: 'target_model' });
  } catch (error) {
    if (error instanceof RequestRefused && error.kind === 'model_not_found') {
      throw new RequestRefused('invalid', `'target_model': the model '${model}' does not exist`);
    }
    if (error instanceof RequestRefused) {
      throw new RequestRefused(error.kind, error.message.replace(/^'model'/, "'target_model'"));
    }
    throw error;
  }
}
