import { describe, expect, it } from 'vitest';
import type { JobEvent } from '../../events/job.ts';
import { DomainError } from '../errors.ts';
import { decide, evolve, initialState, type JobCommand } from './decide.ts';

const queued: JobEvent = {
  type: 'JobQueued',
  data: {
    jobId: 'job_1',
    accountId: 'acct_1',
    subAccountId: null,
    keyId: 'key_1',
    tag: null,
    modality: 'video',
    model: 'google/veo-3.0-fast-generate-001',
    provider: 'google',
    input: { prompt: 'a fox' },
    webhookUrl: null,
    holdId: 'hold_1',
    requestId: 'req_1',
    heldNanos: '1000',
  },
};
const now = new Date('2026-11-22T10:00:00Z');
const claim: JobCommand = { type: 'ClaimJob', now, leaseMs: 60_000, maxAttempts: 3 };
const claimed = (attempt: number, leaseUntil = '2026-11-22T10:01:00.000Z'): JobEvent => ({
  type: 'JobClaimed',
  data: { jobId: 'job_1', attempt, leaseUntil },
});
const given = (events: JobEvent[]) => (command: JobCommand) =>
  decide(command, events.reduce(evolve, initialState()));
const refusal = (events: JobEvent[], command: JobCommand) => {
  try {
    given(events)(command);
  } catch (error) {
    return error instanceof DomainError ? error.kind : 'other';
  }
  return 'accepted';
};

describe('job decider', () => {
  it('queues once: a repeated submission of the same job is a no-op', () => {
    expect(given([])({ type: 'QueueJob', job: queued.data })).toEqual([queued]);
    expect(given([queued])({ type: 'QueueJob', job: queued.data })).toEqual([]);
  });

  it('claims a queued job for its first attempt, and refuses a second claim while the lease holds', () => {
    expect(given([queued])(claim)).toEqual([claimed(1)]);
    expect(refusal([queued, claimed(1)], claim)).toBe('conflict');
  });

  it('reclaims a job whose lease ran out before the provider took it, but not a submitted one', () => {
    const expired = claimed(1, '2026-11-22T09:59:00.000Z');
    expect(given([queued, expired])(claim)).toEqual([claimed(2)]);
    const submitted: JobEvent = {
      type: 'JobSubmitted',
      data: { jobId: 'job_1', attempt: 1, providerJobId: 'op1' },
    };
    expect(refusal([queued, expired, submitted], claim)).toBe('conflict');
  });

  it('waits for the retry time after a failed attempt, and fails the job when the attempts are used up', () => {
    const failed = (attempt: number, retryAt: string): JobEvent => ({
      type: 'JobAttemptFailed',
      data: {
        jobId: 'job_1',
        attempt,
        error: { message: 'busy', type: 'provider_error', code: 502 },
        retryAt,
      },
    });
    expect(refusal([queued, claimed(1), failed(1, '2026-11-22T10:05:00.000Z')], claim)).toBe('conflict');
    expect(given([queued, claimed(1), failed(1, '2026-11-22T09:00:00.000Z')])(claim)).toEqual([claimed(2)]);
    const used = [
      queued,
      claimed(1),
      failed(1, '2026-11-22T09:00:00Z'),
      claimed(2),
      failed(2, '2026-11-22T09:00:00Z'),
      claimed(3),
      failed(3, '2026-11-22T09:00:00Z'),
    ];
    expect(given(used)(claim)).toEqual([
      {
        type: 'JobFailed',
        data: { jobId: 'job_1', error: expect.objectContaining({ type: 'provider_error', code: 502 }) },
      },
    ]);
  });

  it('records a submission only for the attempt that holds the job', () => {
    expect(
      given([queued, claimed(1)])({ type: 'RecordSubmission', attempt: 1, providerJobId: 'op1' }),
    ).toEqual([{ type: 'JobSubmitted', data: { jobId: 'job_1', attempt: 1, providerJobId: 'op1' } }]);
    expect(
      refusal([queued, claimed(2)], { type: 'RecordSubmission', attempt: 1, providerJobId: 'op1' }),
    ).toBe('conflict');
  });

  it('completes only a job in progress; a cancelled job cannot complete, and a finished one cannot be cancelled', () => {
    const complete: JobCommand = {
      type: 'CompleteJob',
      resultFileId: 'file-1',
      resultFilename: 'video.mp4',
      resultBytes: 10,
      result: null,
      chargedNanos: 900n,
      units: 6,
    };
    expect(given([queued, claimed(1)])(complete)).toEqual([
      {
        type: 'JobCompleted',
        data: {
          jobId: 'job_1',
          resultFileId: 'file-1',
          resultFilename: 'video.mp4',
          resultBytes: 10,
          result: null,
          chargedNanos: '900',
          units: 6,
        },
      },
    ]);
    const cancelled: JobEvent = {
      type: 'JobCancelled',
      data: { jobId: 'job_1', wasSubmitted: false, billable: true },
    };
    expect(given([queued, claimed(1)])({ type: 'CancelJob' })).toEqual([cancelled]);
    expect(refusal([queued, claimed(1), cancelled], complete)).toBe('conflict');
    expect(refusal([queued, claimed(1), cancelled], { type: 'CancelJob' })).toBe('conflict');
    expect(
      given([queued, claimed(1), cancelled])({
        type: 'FailJob',
        error: { message: 'x', type: 'provider_error', code: 502 },
      }),
    ).toEqual([]);
  });

  it('charges a cancellation once, and only one made after a worker took the job', () => {
    const charge = {
      chargedNanos: '900',
      units: 6,
      basis: 'hold' as const,
      resultFileId: null,
      resultFilename: null,
    };
    const record: JobCommand = { type: 'RecordCancelCharge', charge };
    expect(given([queued])({ type: 'CancelJob' })).toEqual([
      { type: 'JobCancelled', data: { jobId: 'job_1', wasSubmitted: false, billable: false } },
    ]);
    const free: JobEvent = {
      type: 'JobCancelled',
      data: { jobId: 'job_1', wasSubmitted: false, billable: false },
    };
    expect(refusal([queued, free], record)).toBe('conflict');
    const billable: JobEvent = {
      type: 'JobCancelled',
      data: { jobId: 'job_1', wasSubmitted: false, billable: true },
    };
    const charged: JobEvent = { type: 'JobCancelCharged', data: { jobId: 'job_1', ...charge } };
    expect(given([queued, claimed(1), billable])(record)).toEqual([charged]);
    expect(refusal([queued, claimed(1), billable, charged], record)).toBe('conflict');
    // Written before cancellations were charged: no charge is due.
    const legacy: JobEvent = { type: 'JobCancelled', data: { jobId: 'job_1', wasSubmitted: true } };
    expect(refusal([queued, claimed(1), legacy], record)).toBe('conflict');
  });

  it('knows no commands for a job that does not exist', () => {
    expect(refusal([], claim)).toBe('not_found');
  });
});
