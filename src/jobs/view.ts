import type { z } from 'zod';
import type { JobError } from '../../events/job.ts';
import { nanosToCents } from '../contracts/money.ts';
import type { MediaUrls } from '../media/signed-urls.ts';
import type { JobHistory } from './service.ts';

/** The API's Job record. */
export interface JobView {
  id: string;
  object: 'job';
  status: 'queued' | 'processing' | 'completed' | 'failed';
  modality: string;
  model: string;
  created_at: number;
  updated_at: number;
  error: z.infer<typeof JobError> | null;
  result_file_id: string | null;
  result_url: string | null;
  result?: Record<string, unknown>;
  webhook_url: string | null;
  /** True once a delivery got a 2xx; false until then, and for a job with no webhook_url (nothing delivered). */
  webhook_delivered: boolean;
  attempts: number;
  /** What the job was charged, in cents: null while that is not known yet (queued, processing, a charge pending). */
  cost_cents: number | null;
  /** How a cancelled job was charged; null for a job not cancelled. */
  cancellation: Cancellation | null;
}

/**
 * `after_handoff`: a worker had given the work to the provider (or was giving it) when the client cancelled, so the
 * provider may bill it. `charge`: `none` (cancelled before hand-off, or the provider did not take the work),
 * `pending` (the provider's answer to a submission in flight decides), `charged`. `basis` says how a charge was
 * reckoned: `provider_output` (what the provider delivered), `hold` (the held worst case: the provider had the work
 * and reports nothing once asked to stop), `not_taken`, or `before_handoff`.
 */
export interface Cancellation {
  cancelled_at: number;
  after_handoff: boolean;
  charge: 'none' | 'pending' | 'charged';
  basis: 'before_handoff' | 'provider_output' | 'hold' | 'not_taken' | null;
}

const cancelledBefore: z.infer<typeof JobError> = {
  message: 'The job was cancelled by the client before the provider had it; nothing was charged',
  type: 'cancelled',
  code: 499,
};

const cancelledAfter: z.infer<typeof JobError> = {
  message:
    'The job was cancelled by the client after the provider had it; it is charged as the provider bills it (see cancellation and cost_cents)',
  type: 'cancelled',
  code: 499,
};

const seconds = (at: Date) => Math.floor(at.getTime() / 1000);

/**
 * The record of a job from its history. A cancelled job reads as `failed` with error type `cancelled` (the spec's
 * states have no cancelled) and says in `cancellation` how it was charged; a completed one carries a signed
 * `result_url` valid for an hour.
 */
export function jobView(history: JobHistory, media: MediaUrls, webhookDelivered: boolean | null): JobView {
  const { queued, events } = history;
  const view: JobView = {
    id: queued.jobId,
    object: 'job',
    status: 'queued',
    modality: queued.modality,
    model: queued.model,
    created_at: seconds(events[0]?.at ?? new Date(0)),
    updated_at: seconds(events.at(-1)?.at ?? new Date(0)),
    error: null,
    result_file_id: null,
    result_url: null,
    webhook_url: queued.webhookUrl,
    webhook_delivered: queued.webhookUrl ? (webhookDelivered ?? false) : false,
    attempts: 0,
    cost_cents: null,
    cancellation: null,
  };
  const signed = (filename: string) => media.sign(`jobs/${queued.jobId}/${filename}`).url;
  for (const { event, at } of events) {
    switch (event.type) {
      case 'JobQueued':
        break;
      case 'JobClaimed':
        view.status = 'processing';
        view.attempts = event.data.attempt;
        break;
      case 'JobSubmitted':
        break;
      case 'JobAttemptFailed':
        view.status = 'queued';
        view.error = event.data.error;
        break;
      case 'JobCompleted':
        view.status = 'completed';
        view.error = null;
        view.result_file_id = event.data.resultFileId;
        if (event.data.resultFilename) view.result_url = signed(event.data.resultFilename);
        if (event.data.result) view.result = event.data.result;
        view.cost_cents = nanosToCents(BigInt(event.data.chargedNanos));
        break;
      case 'JobFailed':
        view.status = 'failed';
        view.error = event.data.error;
        view.cost_cents = 0;
        break;
      case 'JobCancelled': {
        const billable = event.data.billable === true;
        view.status = 'failed';
        view.error = billable ? cancelledAfter : cancelledBefore;
        view.cost_cents = billable ? null : 0;
        view.cancellation = {
          cancelled_at: seconds(at),
          after_handoff: billable,
          charge: billable ? 'pending' : 'none',
          basis: billable ? null : 'before_handoff',
        };
        break;
      }
      case 'JobCancelCharged': {
        const charged = BigInt(event.data.chargedNanos);
        view.cost_cents = nanosToCents(charged);
        if (view.cancellation) {
          view.cancellation.charge = event.data.basis === 'not_taken' ? 'none' : 'charged';
          view.cancellation.basis = event.data.basis;
        }
        view.result_file_id = event.data.resultFileId;
        if (event.data.resultFilename) view.result_url = signed(event.data.resultFilename);
        break;
      }
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  }
  return view;
}
