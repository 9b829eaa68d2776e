import type { z } from 'zod';
import type { JobError } from '../../events/job.ts';
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
}

export const CANCELLED: z.infer<typeof JobError> = {
  message: 'The job was cancelled by the client',
  type: 'cancelled',
  code: 499,
};

const seconds = (at: Date) => Math.floor(at.getTime() / 1000);

/**
 * The record of a job from its history. A cancelled job reads as `failed` with error type `cancelled` (the spec's
 * states have no cancelled); a completed one carries a signed `result_url` valid for an hour.
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
  };
  for (const { event } of events) {
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
        if (event.data.resultFilename) {
          view.result_url = media.sign(`jobs/${queued.jobId}/${event.data.resultFilename}`).url;
        }
        if (event.data.result) view.result = event.data.result;
        break;
      case 'JobFailed':
        view.status = 'failed';
        view.error = event.data.error;
        break;
      case 'JobCancelled':
        view.status = 'failed';
        view.error = CANCELLED;
        break;
      default: {
        const _exhaustive: never = event;
        return _exhaustive;
      }
    }
  }
  return view;
}
