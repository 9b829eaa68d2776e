import type { z } from 'zod';
import type { BatchState, UpstreamGroup } from '../../commands/batch/decide.ts';
import type { BatchCommands } from '../../commands/batch/handler.ts';
import type { BatchCreated, BatchUpstreamPrepared } from '../../events/batch.ts';
import type { RequestBodies } from '../billing/request-bodies.ts';
import type { Hold } from '../billing/spending.ts';
import type { CatalogModel } from '../catalog/types.ts';
import type { ChatDeps } from '../chat/complete.ts';
import type { ChatCompletionRequest } from '../chat/request.ts';
import type { UpstreamBatchResult, UpstreamBatchState } from '../contracts/batch.ts';
import type { DescribeError } from '../contracts/errors.ts';
import type { BlobStore } from '../files/blob-store.ts';
import { recordHeld } from '../pipeline/deferred.ts';
import { UpstreamError } from '../providers/errors.ts';
import { holdLine } from './hold-line.ts';
import { keptBody, lineRequestId } from './output.ts';
import type { BatchSettings } from './settings.ts';
import { lineBodies, upstreamBody } from './upstream-bodies.ts';
import { holder, UpstreamLines } from './upstream-lines.ts';
import { type BatchOwnKeys, type BatchTarget, batchTarget, drawCredential } from './upstream-target.ts';

type Created = z.infer<typeof BatchCreated>;
type PreparedLine = z.infer<typeof BatchUpstreamPrepared>['lines'][number];

/** Lines per upstream batch: each upstream batch is one event of holds, kept well under any store's size limit. */
export const UPSTREAM_BATCH_LINES = 1000;
const NEVER = new AbortController().signal;

/** A valid line whose model's provider serves it through its batch API. */
export interface UpstreamLine {
  line: number;
  customId: string;
  body: ChatCompletionRequest;
  model: CatalogModel;
}

export interface UpstreamBatchDeps {
  chat: ChatDeps;
  /** The provider keys accounts bring: an upstream batch goes on its requester's own key first. */
  ownKeys?: BatchOwnKeys | undefined;
  commands: BatchCommands;
  blobs: BlobStore;
  bodies: RequestBodies | undefined;
  settings: BatchSettings;
  describeError: DescribeError;
  log: (line: string) => void;
  context: () => { now: Date };
}

/**
 * Lines sent to their provider's own batch API: held one by one (so every cap holds as for any request), recorded
 * as an upstream batch with their holds, submitted, polled across restarts by the id recorded for it, and each
 * line settled from the provider's usage at the batch rates. What the provider did not serve is released.
 */
export class UpstreamBatches {
  private readonly polledAt = new Map<string, number>();
  private readonly cancelSent = new Set<string>();

  private readonly lines: UpstreamLines;

  constructor(private readonly deps: UpstreamBatchDeps) {
    this.lines = new UpstreamLines(deps);
  }

  /** Holds the lines (one model) and submits them as one upstream batch; a line refused its hold fails at once. */
  async submit(batch: Created, state: BatchState, lines: UpstreamLine[]): Promise<void> {
    const model = lines[0]?.model;
    if (!model) return;
    const auth = holder(batch);
    const held: PreparedLine[] = [];
    const holds: Hold[] = [];
    for (const item of lines) {
      const requestId = lineRequestId(batch.batchId, item.line);
      try {
        const prepared = await holdLine(
          this.deps.chat.spending,
          { auth, requestId, tag: batch.tag },
          model,
          item.body,
        );
        holds.push(prepared.hold);
        held.push({
          line: item.line,
          customId: item.customId,
          holdId: prepared.hold.holdId,
          heldNanos: prepared.hold.grantedNanos.toString(),
          maxTokens: prepared.outputLimit,
        });
      } catch (error) {
        // Refused before anything was sent (no room under a cap, a limit the model does not have): as today.
        const described = this.deps.describeError(error);
        await this.lines.record(batch, {
          line: item.line,
          customId: item.customId,
          statusCode: described.status,
          ...keptBody(described.body),
          error: null,
          costNanos: '0',
        });
      }
    }
    if (held.length === 0) return;
    const group = `${batch.batchId}/${state.groups.size + 1}`;
    // Chosen once and recorded: the provider holds the batch under this key, so every later call uses it.
    const prepared = {
      batchId: batch.batchId,
      group,
      model: model.id,
      provider: model.provider,
      ...drawCredential(this.deps, auth, model),
      lines: held,
    };
    await recordHeld(this.deps.chat.spending, holds, () =>
      this.deps.commands.handle(batch.batchId, { type: 'PrepareUpstream', prepared }, this.deps.context()),
    );
    state.groups.set(group, {
      prepared,
      upstreamBatchId: null,
      ended: null,
    });
    for (const line of held) state.grouped.set(line.line, group);
    await this.send(batch, state.groups.get(group) as UpstreamGroup, false);
  }

  /**
   * Moves every upstream batch of the gateway batch on: submits one recorded but never sent, cancels upstream when
   * the gateway batch is cancelled or out of time, polls, and settles those that ended. True once all are over
   * and every line they held is recorded.
   */
  async advance(batch: Created, state: BatchState, mode: 'run' | 'cancel' | 'expire'): Promise<boolean> {
    let over = true;
    for (const group of state.groups.values()) {
      const open = group.prepared.lines.some((line) => !state.finished.has(line.line));
      if (!open) continue;
      // A provider that fails a poll or a download is asked again at the next pass; other groups go on.
      const moved = await this.advanceOne(batch, state, group, mode).catch((error) => {
        this.deps.log(`upstream batch ${group.prepared.group} could not be moved on: ${String(error)}`);
        return false;
      });
      if (!moved) over = false;
    }
    return over;
  }

  private async advanceOne(
    batch: Created,
    state: BatchState,
    group: UpstreamGroup,
    mode: 'run' | 'cancel' | 'expire',
  ) {
    const name = group.prepared.group;
    const target = this.target(batch, group);
    if (!target || 'unusable' in target) {
      await this.end(batch, group, {
        state: 'failed',
        message:
          target?.unusable ??
          `${group.prepared.model} is no longer served by its provider's batch API on this gateway`,
      });
    } else if (group.ended === null && group.upstreamBatchId === null) {
      if (!(await this.send(batch, group, true, mode))) return false;
    } else if (group.ended === null && group.upstreamBatchId !== null) {
      const id = group.upstreamBatchId;
      if (mode !== 'run' && !this.cancelSent.has(name)) {
        this.cancelSent.add(name);
        await target.api
          .cancel(target.upstream, id, NEVER)
          .catch((error) => this.deps.log(`cancelling upstream batch ${id} failed: ${String(error)}`));
        this.polledAt.delete(name);
      }
      const last = this.polledAt.get(name);
      if (last !== undefined && Date.now() - last < this.deps.settings.pollMs) return false;
      this.polledAt.set(name, Date.now());
      const polled = await target.api.poll(target.upstream, id, NEVER);
      if (polled.state === 'running') return false;
      await this.end(batch, group, polled);
    }
    // Only an upstream batch that is over has every line settled or released, and recorded.
    if (group.ended === null) return false;
    await this.settleGroup(batch, state, group);
    return true;
  }

  /**
   * Sends a recorded upstream batch. On a resumption (`recovering`), one whose submission may have reached the
   * provider is looked up by its name first; where the provider cannot be asked, it is not sent again and its
   * lines fail. A submission the provider refuses ends the upstream batch as failed. False when it could not be
   * decided now (the provider could not be reached to look it up).
   */
  private async send(
    batch: Created,
    group: UpstreamGroup,
    recovering: boolean,
    mode: 'run' | 'cancel' | 'expire' = 'run',
  ): Promise<boolean> {
    const target = this.target(batch, group);
    if (!target || 'unusable' in target) return false;
    const name = group.prepared.group;
    let id: string | undefined;
    if (recovering) {
      if (!target.api.find) {
        await this.end(batch, group, {
          state: 'failed',
          message:
            'The gateway stopped while submitting this request to the provider, which cannot be asked whether it arrived; it was not sent again.',
        });
        return true;
      }
      try {
        id = await target.api.find(target.upstream, name, NEVER);
      } catch (error) {
        this.deps.log(`looking up upstream batch ${name} failed: ${String(error)}`);
        return false;
      }
    }
    if (id === undefined && mode !== 'run') {
      // Cancelled or out of time before it reached the provider: it is not sent now.
      await this.end(batch, group, { state: mode === 'cancel' ? 'cancelled' : 'expired' });
      return true;
    }
    if (id === undefined) {
      const bodies = await lineBodies(
        this.deps.blobs,
        batch,
        new Set(group.prepared.lines.map((line) => line.line)),
      );
      try {
        id = await target.api.submit(
          target.upstream,
          group.prepared.lines.map((line) => ({
            key: `line-${line.line}`,
            body: upstreamBody(bodies.get(line.line), line.maxTokens),
          })),
          name,
          NEVER,
        );
      } catch (error) {
        // A refusal is final. Any other failure (a timeout, a 5xx, a dropped connection) may have come after the
        // provider took the batch: it is looked up by its name at the next pass rather than sent again.
        const refused = error instanceof UpstreamError && error.failure === 'client';
        if (!refused && target.api.find) {
          this.deps.log(`submitting upstream batch ${name} failed, to be looked up: ${String(error)}`);
          return false;
        }
        await this.end(batch, group, {
          state: 'failed',
          message: refused
            ? `the provider refused the batch: ${(error as Error).message}`
            : `the submission failed (${(error as Error).message}) and the provider cannot be asked whether it arrived; it was not sent again`,
        });
        return true;
      }
    }
    await this.deps.commands.handle(
      batch.batchId,
      { type: 'RecordUpstreamSubmitted', group: name, upstreamBatchId: id },
      this.deps.context(),
    );
    group.upstreamBatchId = id;
    this.polledAt.set(name, Date.now());
    return true;
  }

  private async end(
    batch: Created,
    group: UpstreamGroup,
    ended: Exclude<UpstreamBatchState, { state: 'running' }>,
  ) {
    const data = {
      batchId: batch.batchId,
      group: group.prepared.group,
      state: ended.state,
      message: 'message' in ended ? ended.message.slice(0, 500) : null,
    };
    await this.deps.commands.handle(
      batch.batchId,
      { type: 'RecordUpstreamEnded', ended: data },
      this.deps.context(),
    );
    group.ended = data;
  }

  /** Settles each served line from the provider's usage, releases the rest, and records every line of the group. */
  private async settleGroup(batch: Created, state: BatchState, group: UpstreamGroup): Promise<void> {
    const ended = group.ended;
    const target = this.target(batch, group);
    if (!ended) return;
    const pending = group.prepared.lines.filter((line) => !state.finished.has(line.line));
    if (pending.length === 0) return;
    const results = new Map<string, UpstreamBatchResult>();
    if (ended.state !== 'failed' && target && !('unusable' in target) && group.upstreamBatchId !== null) {
      const listed = await target.api.results(target.upstream, group.upstreamBatchId, NEVER);
      const keys = new Set(group.prepared.lines.map((line) => `line-${line.line}`));
      for (const [index, result] of listed.entries()) {
        // A provider that does not echo keys answers in the order of the requests.
        const key = keys.has(result.key) ? result.key : `line-${group.prepared.lines[index]?.line}`;
        results.set(key, result);
      }
    }
    const bodies = await lineBodies(this.deps.blobs, batch, new Set(pending.map((line) => line.line)));
    await this.lines.settle(batch, group, ended, pending, results, bodies);
  }

  private target(batch: Created, group: UpstreamGroup): BatchTarget {
    return batchTarget(this.deps, holder(batch), group.prepared);
  }
}
