import { randomBytes } from 'node:crypto';
import { BatchCommands } from '../../commands/batch/handler.ts';
import type { EventStore } from '../../events/store.ts';
import { type BatchRow, batchRow, listBatches } from '../../projections/batches/index.ts';
import type { Sql } from '../../projections/types.ts';
import type { KeyHolder } from '../accounts/live-state.ts';
import { RequestRefused } from '../contracts/errors.ts';
import type { FilesService } from '../files/service.ts';
import { projectedUpTo } from '../projections/wait.ts';
import type { BatchEndpoint } from './input.ts';

/** OpenAI's only completion window. */
export const COMPLETION_WINDOW_MS = 24 * 3600 * 1000;

export interface CreateBatchInput {
  input_file_id: string;
  endpoint: BatchEndpoint;
  completion_window: '24h';
  metadata?: Record<string, string> | null;
}

const seconds = (at: Date | null) => (at === null ? null : Math.floor(at.getTime() / 1000));

/** The Batch resource in OpenAI's shape. */
export function toBatchObject(row: BatchRow) {
  return {
    id: row.batch_id,
    object: 'batch' as const,
    endpoint: row.endpoint,
    errors: row.errors ? { object: 'list' as const, data: row.errors } : null,
    input_file_id: row.input_file_id,
    completion_window: row.completion_window,
    status: row.status,
    output_file_id: row.output_file_id,
    error_file_id: row.error_file_id,
    created_at: seconds(row.created_at) as number,
    in_progress_at: seconds(row.in_progress_at),
    expires_at: seconds(row.expires_at),
    finalizing_at: seconds(row.finalizing_at),
    completed_at: seconds(row.completed_at),
    failed_at: seconds(row.failed_at),
    expired_at: seconds(row.expired_at),
    cancelling_at: seconds(row.cancelling_at),
    cancelled_at: seconds(row.cancelled_at),
    request_counts: { total: row.total, completed: row.completed, failed: row.failed },
    metadata: row.metadata,
  };
}

/** Batches: created and cancelled through events on `batch-{id}`, read from the `batches` read model. */
export class BatchService {
  private readonly commands: BatchCommands;

  constructor(
    private readonly store: EventStore,
    private readonly sql: Sql,
    private readonly files: FilesService,
    private readonly clock: () => Date = () => new Date(),
    /** Refuses an input file whose lines this gateway will not batch (GATEWAY_BATCH_FALLBACK=refuse). */
    private readonly admit: (inputFileId: string, endpoint: string) => Promise<void> = async () => {},
  ) {
    this.commands = new BatchCommands(store);
  }

  async create(auth: KeyHolder, input: CreateBatchInput, tag: string | null, requestId: string) {
    const file = await this.files.owned(auth, input.input_file_id).catch(() => {
      throw new RequestRefused('not_found', `'input_file_id': no file with id '${input.input_file_id}'`);
    });
    if (file.purpose !== 'batch') {
      throw new RequestRefused(
        'invalid',
        `'input_file_id': file ${file.file_id} has purpose ${file.purpose}; a batch reads a file uploaded with purpose batch`,
      );
    }
    await this.admit(file.file_id, input.endpoint);
    const batchId = `batch_${randomBytes(12).toString('hex')}`;
    const now = this.clock();
    const decision = await this.commands.handle(
      batchId,
      {
        type: 'CreateBatch',
        batch: {
          batchId,
          accountId: auth.accountId,
          subAccountId: auth.subAccountId,
          keyId: auth.keyId,
          tag,
          inputFileId: file.file_id,
          endpoint: input.endpoint,
          completionWindow: input.completion_window,
          metadata: input.metadata ?? null,
          expiresAt: new Date(now.getTime() + COMPLETION_WINDOW_MS).toISOString(),
        },
      },
      { now, correlationId: requestId },
    );
    return this.after(auth, batchId, decision.checkpoint);
  }

  async get(auth: KeyHolder, batchId: string) {
    return toBatchObject(await this.owned(auth, batchId));
  }

  async list(auth: KeyHolder, query: { limit: number; after?: string }) {
    const rows = await listBatches(this.sql, auth, query);
    const data = rows.slice(0, query.limit).map(toBatchObject);
    return {
      object: 'list' as const,
      data,
      first_id: data[0]?.id ?? null,
      last_id: data[data.length - 1]?.id ?? null,
      has_more: rows.length > query.limit,
    };
  }

  /** Moves the batch to cancelling; the worker stops its lines and concludes it as cancelled. */
  async cancel(auth: KeyHolder, batchId: string, requestId: string) {
    await this.owned(auth, batchId);
    const decision = await this.commands.handle(
      batchId,
      { type: 'RequestCancel', owner: auth },
      { now: this.clock(), correlationId: requestId },
    );
    return this.after(auth, batchId, decision.checkpoint);
  }

  private async after(auth: KeyHolder, batchId: string, checkpoint: string | undefined) {
    if (checkpoint) await projectedUpTo(this.sql, this.store, 'batches', checkpoint);
    return this.get(auth, batchId);
  }

  private async owned(auth: KeyHolder, batchId: string): Promise<BatchRow> {
    const row = await batchRow(this.sql, batchId);
    if (!row || row.account_id !== auth.accountId || row.sub_account_id !== auth.subAccountId) {
      throw new RequestRefused('not_found', `No batch with id '${batchId}'`);
    }
    return row;
  }
}
