import type { z } from 'zod';
import type { UpstreamGroup } from '../../commands/batch/decide.ts';
import type { BatchCreated, BatchLineFinished, BatchUpstreamPrepared } from '../../events/batch.ts';
import type { KeyHolder } from '../accounts/live-state.ts';
import { RequestLog } from '../billing/request-log.ts';
import type { Hold } from '../billing/spending.ts';
import type { CatalogModel } from '../catalog/types.ts';
import type { ChatCompletionRequest } from '../chat/request.ts';
import { chatBill, completionId, countInputTokens } from '../chat/service.ts';
import type { UpstreamBatchResult, UpstreamBatchState } from '../contracts/batch.ts';
import type { ChatCompletion } from '../contracts/chat.ts';
import { settle } from '../pipeline/ledger.ts';
import { ownKeyBill, ownKeyName } from '../pipeline/own-key.ts';
import { clientError } from '../pipeline/retries.ts';
import { failureOf, UpstreamError } from '../providers/errors.ts';
import { atBatchRates } from './hold-line.ts';
import { keptBody, lineRequestId } from './output.ts';
import { recordLine } from './record-line.ts';
import type { UpstreamBatchDeps } from './upstream.ts';

type Created = z.infer<typeof BatchCreated>;
type Line = z.infer<typeof BatchLineFinished>;
type PreparedLine = z.infer<typeof BatchUpstreamPrepared>['lines'][number];
type Ended = NonNullable<UpstreamGroup['ended']>;

/** Why lines an upstream batch did not serve failed, by how it ended. */
const UNSERVED: Record<Exclude<UpstreamBatchState['state'], 'running' | 'ended'>, string> = {
  failed: 'upstream_batch_failed',
  expired: 'batch_expired',
  cancelled: 'batch_cancelled',
};

export const holder = (batch: Created): KeyHolder => ({
  keyId: batch.keyId,
  accountId: batch.accountId,
  keyHash: '',
  subAccountId: batch.subAccountId,
});

/**
 * The lines of a provider's batch once it is over: each served line settled at the batch rates from the provider's
 * usage and logged, each other released, and every one recorded in the gateway batch.
 */
export class UpstreamLines {
  constructor(private readonly deps: UpstreamBatchDeps) {}

  /** Holds made for lines that were then never recorded as an upstream batch: released, as a failure's. */
  async releaseHeld(holds: Hold[]): Promise<void> {
    for (const hold of holds) await this.deps.chat.spending.release(hold, 'failed').catch(() => undefined);
  }

  async settle(
    batch: Created,
    group: UpstreamGroup,
    ended: Ended,
    pending: PreparedLine[],
    results: Map<string, UpstreamBatchResult>,
    bodies: Map<number, ChatCompletionRequest>,
  ): Promise<void> {
    const model = atBatchRates(this.deps.chat.catalog.get(group.prepared.model) as CatalogModel);
    const auth = holder(batch);
    for (const line of pending) {
      const hold: Hold = {
        holdId: line.holdId,
        requestId: lineRequestId(batch.batchId, line.line),
        grantedNanos: BigInt(line.heldNanos),
        accountId: batch.accountId,
        limits: this.deps.chat.spending.limits(auth, batch.tag, group.prepared.model),
      };
      const result = results.get(`line-${line.line}`);
      const body = bodies.get(line.line);
      if (result && 'completion' in result) {
        await this.served(batch, line, hold, model, body, result, group.prepared.credential);
        continue;
      }
      await this.deps.chat.spending.release(hold, ended.state === 'cancelled' ? 'cancelled' : 'failed');
      if (result && 'error' in result) {
        const error = new UpstreamError(
          failureOf(result.error.status),
          result.error.message,
          result.error.status,
        );
        // Converted as a served call's upstream failure is (pipeline/retries.ts), so the line reads as it would.
        const described = this.deps.describeError(clientError(error, model.id));
        await this.logFailed(batch, line, body, model, described.status, described.body.error);
        await this.record(batch, {
          line: line.line,
          customId: line.customId,
          statusCode: described.status,
          ...keptBody(described.body),
          error: null,
          costNanos: '0',
        });
        continue;
      }
      const why = ended.state === 'ended' ? 'failed' : ended.state;
      await this.record(batch, {
        line: line.line,
        customId: line.customId,
        statusCode: 500,
        body: null,
        error: {
          code: UNSERVED[why],
          message: `The provider's batch did not serve this request (${why}${ended.message ? `: ${ended.message}` : ''}); it was not charged.`,
        },
        costNanos: '0',
      });
    }
  }

  /**
   * A served line: settled at the batch rates from the provider's usage (the fee alone on them, on the requester's own
   * key), in the request log, then recorded.
   */
  private async served(
    batch: Created,
    line: PreparedLine,
    hold: Hold,
    model: CatalogModel,
    body: ChatCompletionRequest | undefined,
    result: Extract<UpstreamBatchResult, { completion: ChatCompletion }>,
    credential: string | undefined,
  ) {
    const completion = { ...result.completion, id: result.completion.id ?? completionId(), model: model.id };
    const billed = await chatBill(
      {
        model,
        inputTokens: result.usage ? 0 : await inputTokensOf(body),
        outputLimit: line.maxTokens,
        hold,
        discount: 'batch_api',
      },
      result.usage,
      replyText(completion),
    );
    // On the requester's own key the provider bills the requester its batch rates: the fee alone on that pass-through.
    const bill = ownKeyName(credential) === undefined ? billed : ownKeyBill(billed);
    const log = this.requestLog(batch, line, body);
    if (log) {
      log.tried(model.id, model.provider, 0);
      log.respond(completion);
      if (bill.usage) log.usage = { ...bill.usage };
    }
    const costNanos = await settle(this.deps.chat.spending, { ...hold, ...(log && { log }) }, model, {
      ...bill,
      ...(credential !== undefined && { credential }),
    });
    await this.record(batch, {
      line: line.line,
      customId: line.customId,
      statusCode: 200,
      ...keptBody(completion),
      error: null,
      costNanos: costNanos.toString(),
    });
  }

  private requestLog(batch: Created, line: PreparedLine, body: unknown): RequestLog | undefined {
    if (!this.deps.bodies) return undefined;
    const log = new RequestLog(this.deps.bodies, {
      requestId: lineRequestId(batch.batchId, line.line),
      batchLine: { batchId: batch.batchId, line: line.line },
      auth: holder(batch),
      endpoint: '/v1/chat/completions',
      body: body ?? null,
    });
    log.metered = true;
    log.tag = batch.tag;
    return log;
  }

  private async logFailed(
    batch: Created,
    line: PreparedLine,
    body: unknown,
    model: CatalogModel,
    status: number,
    error: { type: string; message: string },
  ) {
    const log = this.requestLog(batch, line, body);
    if (!log) return;
    log.tried(model.id, model.provider, 0);
    log.errorType = error.type;
    log.errorMessage = error.message;
    const record = log.finish({ status, costNanos: 0n, holdId: null });
    if (record)
      await this.deps.chat.spending
        .logRequest(record)
        .catch((error) => this.deps.log(`logging ${record.requestId} failed: ${String(error)}`));
  }

  async record(batch: Created, line: Omit<Line, 'batchId' | 'requestId'>): Promise<void> {
    await recordLine(
      this.deps.commands,
      { batchId: batch.batchId, requestId: lineRequestId(batch.batchId, line.line), ...line },
      this.deps.context,
    );
  }
}

async function inputTokensOf(body: ChatCompletionRequest | undefined): Promise<number> {
  return body ? countInputTokens(body) : 0;
}

function replyText(completion: ChatCompletion): string {
  const message = (completion.choices[0] as { message?: { content?: unknown } } | undefined)?.message;
  return typeof message?.content === 'string' ? message.content : '';
}
