import type { z } from 'zod';
import type { UpstreamGroup } from '../../commands/batch/decide.ts';
import type { BatchCreated, BatchLineFinished, BatchUpstreamPrepared } from '../../events/batch.ts';
import type { KeyHolder } from '../accounts/live-state.ts';
import type { Hold } from '../billing/spending.ts';
import type { CatalogModel } from '../catalog/types.ts';
import type { ChatCompletionRequest } from '../chat/request.ts';
import { chatBill, completionId, countInputTokens } from '../chat/service.ts';
import type { UpstreamBatchResult, UpstreamBatchState } from '../contracts/batch.ts';
import type { ChatCompletion, ReportedUsage } from '../contracts/chat.ts';
import {
  type DeferredRequest,
  releaseDeferredRequest,
  settleDeferredRequest,
} from '../pipeline/deferred-requests.ts';
import { clientError } from '../pipeline/retries.ts';
import type { Bill } from '../pipeline/types.ts';
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
 * usage and each other released, as the pipeline ends any deferred request (pipeline/deferred-requests.ts, which
 * writes their records too), and every one recorded in the gateway batch.
 */
export class UpstreamLines {
  constructor(private readonly deps: UpstreamBatchDeps) {}

  async settle(
    batch: Created,
    group: UpstreamGroup,
    ended: Ended,
    pending: PreparedLine[],
    results: Map<string, UpstreamBatchResult>,
    bodies: Map<number, ChatCompletionRequest>,
  ): Promise<void> {
    const model = atBatchRates(this.deps.chat.catalog.get(group.prepared.model) as CatalogModel);
    const deps = { spending: this.deps.chat.spending, bodies: this.deps.bodies, log: this.deps.log };
    for (const line of pending) {
      const body = bodies.get(line.line);
      const request = lineRequest(batch, group, line, model, body);
      const result = results.get(`line-${line.line}`);
      if (result && 'completion' in result) {
        // Settled at the batch rates from the provider's usage (the fee alone on the requester's own key).
        const completion = {
          ...result.completion,
          id: result.completion.id ?? completionId(),
          model: model.id,
        };
        const costNanos = await settleDeferredRequest(deps, request, {
          bill: (hold) => lineBill(model, line, hold, body, result.usage, replyText(completion)),
          response: completion,
        });
        await this.record(batch, {
          line: line.line,
          customId: line.customId,
          statusCode: 200,
          ...keptBody(completion),
          error: null,
          costNanos: costNanos.toString(),
        });
        continue;
      }
      const reason = ended.state === 'cancelled' ? 'cancelled' : 'failed';
      if (result && 'error' in result) {
        const error = new UpstreamError(
          failureOf(result.error.status),
          result.error.message,
          result.error.status,
        );
        // Converted as a served call's upstream failure is (pipeline/retries.ts), so the line reads as it would.
        const described = this.deps.describeError(clientError(error, model.id));
        await releaseDeferredRequest(deps, request, reason, {
          status: described.status,
          error: described.body.error,
        });
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
      await releaseDeferredRequest(deps, request, reason);
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

  async record(batch: Created, line: Omit<Line, 'batchId' | 'requestId'>): Promise<void> {
    await recordLine(
      this.deps.commands,
      { batchId: batch.batchId, requestId: lineRequestId(batch.batchId, line.line), ...line },
      this.deps.context,
    );
  }
}

/** A line as the pipeline ends it: its recorded hold, the model at the batch rates, its record's fields. */
function lineRequest(
  batch: Created,
  group: UpstreamGroup,
  line: PreparedLine,
  model: CatalogModel,
  body: ChatCompletionRequest | undefined,
): DeferredRequest {
  return {
    hold: {
      holdId: line.holdId,
      requestId: lineRequestId(batch.batchId, line.line),
      heldNanos: line.heldNanos,
      accountId: batch.accountId,
      subAccountId: batch.subAccountId,
      keyId: batch.keyId,
      tag: batch.tag,
      model: group.prepared.model,
    },
    model,
    credential: group.prepared.credential,
    endpoint: '/v1/chat/completions',
    body: body ?? null,
    batchLine: { batchId: batch.batchId, line: line.line },
  };
}

/** A served line's bill at the batch rates: the provider's usage, else the gateway's count of input and answer. */
async function lineBill(
  model: CatalogModel,
  line: PreparedLine,
  hold: Hold,
  body: ChatCompletionRequest | undefined,
  usage: ReportedUsage | undefined,
  replied: string,
): Promise<Bill> {
  const inputTokens = usage ? 0 : await inputTokensOf(body);
  const prepared = { model, inputTokens, outputLimit: line.maxTokens, hold, discount: 'batch_api' as const };
  return chatBill(prepared, usage, replied);
}

async function inputTokensOf(body: ChatCompletionRequest | undefined): Promise<number> {
  return body ? countInputTokens(body) : 0;
}

function replyText(completion: ChatCompletion): string {
  const message = (completion.choices[0] as { message?: { content?: unknown } } | undefined)?.message;
  return typeof message?.content === 'string' ? message.content : '';
}
