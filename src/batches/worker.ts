import type pg from 'pg';
import type { z } from 'zod';
import type { BatchState } from '../../commands/batch/decide.ts';
import { BatchCommands } from '../../commands/batch/handler.ts';
import type { BatchCreated, BatchLineFinished } from '../../events/batch.ts';
import type { EventStore } from '../../events/store.ts';
import { workChargesByPrefix } from '../../projections/balances/index.ts';
import { batchStatus } from '../../projections/batches/index.ts';
import type { KeyHolder } from '../accounts/live-state.ts';
import type { RequestBodies } from '../billing/request-bodies.ts';
import { type ChatDeps, completeChat } from '../chat/complete.ts';
import type { ChatCompletionRequest } from '../chat/request.ts';
import { completionId } from '../chat/service.ts';
import type { DescribeError } from '../contracts/errors.ts';
import type { BlobStore } from '../files/blob-store.ts';
import { type FilesService, fileBlobKey } from '../files/service.ts';
import type { EmbeddingsRequest } from '../modalities/embeddings/request.ts';
import { createEmbeddings } from '../modalities/embeddings/service.ts';
import { meteredContext, openRecord } from '../pipeline/record.ts';
import { recordUnsettled } from '../pipeline/unsettled.ts';
import { projectedUpTo } from '../projections/wait.ts';
import { concludeBatch } from './conclude.ts';
import { inputLines, parseInputLine, validateInput } from './input.ts';
import { keptBody, lineOfRequest, lineRequestId, lineRequestPrefix } from './output.ts';
import { recordLine } from './record-line.ts';
import { BatchScheduler, type BatchTurn } from './scheduler.ts';
import { type BatchSettings, gatewayLineDiscount, lineModel, servedByBatchApi } from './settings.ts';
import { loadBatch } from './state.ts';
import { releaseStrayHolds } from './stray-holds.ts';
import { UPSTREAM_BATCH_LINES, UpstreamBatches, type UpstreamLine } from './upstream.ts';
import type { BatchOwnKeys } from './upstream-target.ts';

export interface BatchWorkerOptions {
  pool: pg.Pool;
  store: EventStore;
  blobs: BlobStore;
  files: FilesService;
  chat: ChatDeps;
  clock: () => Date;
  log: (line: string) => void;
  /** How often the worker looks for due batches. */
  intervalMs: number;
  /** Lines in flight at once on this gateway, across all the batches it works. */
  concurrency: number;
  /** A failed line's status and body, as the same request would have been answered. */
  describeError: DescribeError;
  /** Which providers' batch APIs serve their lines, and what the others get. */
  settings: BatchSettings;
  /** Where the request log keeps bodies; without it, lines are not in the request log. */
  bodies?: RequestBodies;
  /** The provider keys accounts bring: a line goes on its requester's own key for the provider first. */
  ownKeys?: BatchOwnKeys;
}

/** Lines in flight at once per gateway, shared by its batches: GATEWAY_BATCH_CONCURRENCY, else 4. */
export function batchConcurrency(env: NodeJS.ProcessEnv): number {
  const given = Number(env.GATEWAY_BATCH_CONCURRENCY);
  return Number.isSafeInteger(given) && given > 0 ? Math.min(given, 64) : 4;
}

/** How often a running batch looks whether it was cancelled. */
const CANCEL_POLL_MS = 200;
const NEVER = new AbortController().signal;
type Outcome = 'done' | 'stopped' | 'yielded' | 'cancelled' | 'expired';

/**
 * Works batches from the `batches` read model: validates the input file, runs each line through the chat
 * service at the batch price, records every finished line as an event, and writes the output and error files.
 * One instance at a time works a batch: it holds a PostgreSQL advisory lock on the batch for as long as it works
 * it, and the lock goes with its connection if the instance dies. A restart resumes from the recorded lines.
 *
 * Several batches are worked at once and share the gateway's line slots (`FairShare`): accounts take turns line
 * by line, so a small batch does not wait behind another tenant's large one.
 */
export class BatchWorker {
  private readonly commands: BatchCommands;
  private readonly controller = new AbortController();
  private readonly upstream: UpstreamBatches;
  /** Batches this instance has run a take of: later passes only move their upstream batches on. */
  private readonly taken = new Set<string>();
  private readonly scheduler: BatchScheduler;

  constructor(private readonly options: BatchWorkerOptions) {
    this.commands = new BatchCommands(options.store);
    this.scheduler = new BatchScheduler({
      ...options,
      taken: (batchId) => this.taken.has(batchId),
      work: (batchId, turn) => this.work(batchId, turn),
    });
    this.upstream = new UpstreamBatches({
      chat: options.chat,
      ownKeys: options.ownKeys,
      commands: this.commands,
      blobs: options.blobs,
      bodies: options.bodies,
      settings: options.settings,
      describeError: options.describeError,
      log: options.log,
      context: () => this.context(),
    });
  }

  start(): void {
    this.scheduler.start();
  }

  /** Stops taking lines; the lines in flight finish and are recorded before this resolves. */
  async stop(): Promise<void> {
    this.controller.abort();
    await this.scheduler.stop();
  }

  private expired(batch: z.infer<typeof BatchCreated>): boolean {
    return this.options.clock().getTime() >= Date.parse(batch.expiresAt);
  }

  private async work(batchId: string, turn: BatchTurn): Promise<void> {
    let state = await loadBatch(this.options.store, batchId);
    const batch = state.created;
    if (!batch) return;
    if (state.status === 'validating') {
      if (this.expired(batch)) return this.conclude(batchId, 'expired');
      const validation = await validateInput(
        () => this.options.blobs.read(fileBlobKey(batch.inputFileId)),
        batch.endpoint,
      );
      await this.commands.handle(
        batchId,
        validation.ok
          ? { type: 'RecordValidation', total: validation.total, invalid: validation.invalid }
          : { type: 'FailValidation', errors: validation.errors },
        this.context(),
      );
      state = await loadBatch(this.options.store, batchId);
    }
    if (state.status === 'queued' || state.status === 'in_progress') {
      let ran: Awaited<ReturnType<BatchWorker['runLines']>> = 'done';
      if (this.expired(batch)) ran = 'expired';
      else if (!this.taken.has(batchId)) {
        const started = await this.commands.handle(batchId, { type: 'StartBatch' }, this.context());
        ran = await this.runLines(batchId, started.state, started.checkpoint, turn);
        if (ran === 'stopped' || ran === 'yielded') return;
        this.taken.add(batchId);
      }
      state = await loadBatch(this.options.store, batchId);
      const mode = state.status === 'cancelling' ? 'cancel' : ran === 'expired' ? 'expire' : 'run';
      // Upstream batches run for minutes or hours: the batch is left and looked at again on a later pass.
      if (!(await this.upstream.advance(batch, state, mode))) return;
      this.taken.delete(batchId);
      if (mode === 'cancel') return this.conclude(batchId, 'cancelled');
      if (mode === 'expire') return this.conclude(batchId, 'expired');
      await this.commands.handle(batchId, { type: 'Finalize' }, this.context());
      return this.conclude(batchId, 'completed');
    }
    if (state.status === 'finalizing') return this.conclude(batchId, 'completed');
    if (state.status === 'cancelling') {
      if (!(await this.upstream.advance(batch, state, 'cancel'))) return;
      return this.conclude(batchId, 'cancelled');
    }
  }

  /**
   * Runs the lines without a recorded result, each in a line slot of the gateway's shared `concurrency`, taken in
   * turn with the other batches worked here (`FairShare`). On a resumed take, a line that was
   * charged but whose result was never recorded (the gateway stopped between the two) is recorded as failed,
   * with what it was charged, rather than run and charged again. A line whose result could not be recorded
   * stops the take: a batch is never finished with a charged line missing from its files.
   */
  private async runLines(
    batchId: string,
    state: BatchState,
    startCheckpoint: string | undefined,
    turn: BatchTurn,
  ): Promise<Outcome> {
    const batch = state.created as z.infer<typeof BatchCreated>;
    // An input file deleted since validation leaves its unrun lines unrunnable: they are counted failed.
    if ((await this.options.blobs.size(fileBlobKey(batch.inputFileId))) === undefined) return 'done';
    const billed =
      state.takes > 1 ? await this.billedLines(batch, startCheckpoint) : new Map<number, bigint>();
    if (billed === undefined) return 'stopped';
    const auth: KeyHolder = {
      keyId: batch.keyId,
      accountId: batch.accountId,
      keyHash: '',
      subAccountId: batch.subAccountId,
    };
    // An earlier take's holds that no upstream batch records would keep their money held for two days.
    if (state.takes > 1 && (await this.holdsCaughtUp(startCheckpoint)))
      await releaseStrayHolds(this.options.pool, this.options.chat.spending, batch, auth, state);
    const inFlight = new Set<Promise<void>>();
    let checkedAt = 0;
    let outcome: Outcome = 'done';
    const halt = async (): Promise<Outcome | undefined> => {
      if (this.controller.signal.aborted) return 'stopped';
      if (this.expired(batch)) return 'expired';
      if (Date.now() - checkedAt >= CANCEL_POLL_MS) {
        checkedAt = Date.now();
        if ((await batchStatus(this.options.pool, batchId)) === 'cancelling') return 'cancelled';
      }
      return turn.room.signal.aborted ? 'yielded' : undefined;
    };
    const seen = new Set<string>();
    let unrecorded = 0;
    // Accounts take turns for slots, then the payers (the account, each sub-account) of one, then their batches.
    const slotPath = [batch.accountId, batch.subAccountId ?? '', batchId];
    const { catalog, env } = this.options.chat;
    const upstreamLines = new Map<string, UpstreamLine[]>();
    const submit = async (lines: UpstreamLine[]) => {
      try {
        await this.upstream.submit(batch, state, lines);
      } catch (error) {
        unrecorded += 1;
        this.options.log(`batch ${batchId} could not submit lines upstream: ${String(error)}`);
      }
    };
    for await (const { line, text } of inputLines(this.options.blobs.read(fileBlobKey(batch.inputFileId)))) {
      const parsed = parseInputLine(line, text, batch.endpoint, seen);
      // A line of an upstream batch is settled and recorded from that batch's results, never run here.
      if (!parsed.valid || state.finished.has(line) || state.grouped.has(line)) continue;
      const charged = billed.get(line);
      if (charged !== undefined) {
        await this.record({
          batchId,
          line,
          customId: parsed.customId,
          requestId: lineRequestId(batchId, line),
          statusCode: 500,
          body: null,
          error: {
            code: 'result_lost',
            message:
              'The gateway stopped after this request was charged and before its response was recorded; it was not run again.',
          },
          costNanos: charged.toString(),
        });
        continue;
      }
      const model = lineModel(catalog, env, batch.endpoint, (parsed.body as { model?: unknown }).model);
      if (model && servedByBatchApi(this.options.settings, model, batch.endpoint, env)) {
        const waiting = upstreamLines.get(model.id) ?? [];
        waiting.push({ line, customId: parsed.customId, body: parsed.body as ChatCompletionRequest, model });
        upstreamLines.set(model.id, waiting);
        if (waiting.length >= UPSTREAM_BATCH_LINES) {
          upstreamLines.delete(model.id);
          await submit(waiting);
        }
        if (unrecorded > 0) {
          outcome = 'stopped';
          break;
        }
        continue;
      }
      const slotted = await this.scheduler.share.acquire(slotPath, turn.room.signal);
      const stop = await halt().catch((error) => {
        if (slotted) this.scheduler.share.release();
        throw error;
      });
      if (stop || !slotted) {
        if (slotted) this.scheduler.share.release();
        outcome = stop ?? 'stopped';
        break;
      }
      const running: Promise<void> = this.runLine(batchId, batch, auth, line, parsed.customId, parsed.body)
        .catch((error) => {
          unrecorded += 1;
          this.options.log(`batch ${batchId} line ${line} was not recorded: ${String(error)}`);
        })
        .finally(() => {
          this.scheduler.share.release();
          inFlight.delete(running);
        });
      inFlight.add(running);
      if (unrecorded > 0) {
        outcome = 'stopped';
        break;
      }
    }
    await Promise.all(inFlight);
    if (outcome === 'done' && unrecorded === 0) {
      const stop = await halt();
      // Every line has run: a batch asked to make room has nothing left to give it.
      if (stop && stop !== 'yielded') return stop;
      for (const lines of upstreamLines.values()) if (unrecorded === 0) await submit(lines);
    }
    return unrecorded > 0 ? 'stopped' : outcome;
  }

  private async runLine(
    batchId: string,
    batch: z.infer<typeof BatchCreated>,
    auth: KeyHolder,
    line: number,
    customId: string,
    body: ChatCompletionRequest | EmbeddingsRequest,
  ): Promise<void> {
    const requestId = lineRequestId(batchId, line);
    let result: Pick<z.infer<typeof BatchLineFinished>, 'statusCode' | 'body' | 'bodyJson' | 'costNanos'>;
    // Not stopped by a shutdown: a line in flight finishes and is recorded, so it is never paid for twice.
    const { catalog, env, fallbacks } = this.options.chat;
    const discount = gatewayLineDiscount(catalog, env, batch.endpoint, body, fallbacks);
    const log = this.options.bodies
      ? openRecord(this.options.bodies, {
          requestId,
          batchLine: { batchId, line },
          auth,
          endpoint: batch.endpoint,
          body,
        })
      : undefined;
    // The requester's own provider key serves its line first, as any of its requests (docs/batches.md).
    const context = meteredContext({
      auth,
      requestId,
      tag: batch.tag,
      signal: NEVER,
      ownKeys: true,
      ...(log && { log }),
    });
    const deps = this.options.chat;
    try {
      if (batch.endpoint === '/v1/embeddings') {
        const served = await createEmbeddings(deps, context, body as EmbeddingsRequest, discount);
        result = { statusCode: 200, ...keptBody(served.result), costNanos: served.costNanos.toString() };
      } else {
        const served = await completeChat(deps, context, body as ChatCompletionRequest, discount);
        result = {
          statusCode: 200,
          ...keptBody({ ...served.completion, id: served.completion.id ?? completionId() }),
          costNanos: served.costNanos.toString(),
        };
      }
    } catch (error) {
      const described = this.options.describeError(error);
      result = { statusCode: described.status, ...keptBody(described.body), costNanos: '0' };
      // Settled lines are logged by their settlement; a refused or failed one by the pipeline, as the edge's is.
      await recordUnsettled(
        this.options.chat.spending,
        log,
        { status: described.status, error: described.body.error },
        (failure) => this.options.log(`logging ${requestId} failed: ${String(failure)}`),
      );
    }
    await this.record({ batchId, line, customId, requestId, error: null, ...result });
  }

  private async record(line: z.infer<typeof BatchLineFinished>): Promise<void> {
    await recordLine(this.commands, line, () => this.context());
  }

  /**
   * Lines of this batch already charged, with what they were charged in all, from the `charges` read model once
   * it has caught up with this take's start (every charge of an earlier take was committed before it);
   * undefined when it has not caught up yet. A line's charges are those the gateway recorded under the line's
   * request id, which only the gateway makes: no client's request is taken for a line.
   */
  private async billedLines(
    batch: z.infer<typeof BatchCreated>,
    startCheckpoint: string | undefined,
  ): Promise<Map<number, bigint> | undefined> {
    if (startCheckpoint === undefined) return undefined;
    const caughtUp = await projectedUpTo(
      this.options.pool,
      this.options.store,
      'balances',
      startCheckpoint,
      30_000,
    );
    if (!caughtUp) return undefined;
    const prefix = lineRequestPrefix(batch.batchId);
    const billed = new Map<number, bigint>();
    for (const [requestId, nanos] of await workChargesByPrefix(this.options.pool, batch.accountId, prefix)) {
      const line = lineOfRequest(batch.batchId, requestId);
      if (line !== undefined) billed.set(line, nanos);
    }
    return billed;
  }

  private async holdsCaughtUp(startCheckpoint: string | undefined): Promise<boolean> {
    if (startCheckpoint === undefined) return false;
    return projectedUpTo(this.options.pool, this.options.store, 'holds', startCheckpoint, 30_000);
  }

  private conclude(batchId: string, as: 'completed' | 'expired' | 'cancelled'): Promise<void> {
    return concludeBatch({ ...this.options, commands: this.commands }, batchId, as);
  }

  private context() {
    return { now: this.options.clock() };
  }
}
