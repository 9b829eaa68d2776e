import type { z } from 'zod';
import type { JobError } from '../../events/job.ts';
import { storableText } from '../../events/storable.ts';
import { type DescribeError, RequestRefused } from '../contracts/errors.ts';
import { clientError } from '../pipeline/retries.ts';
import { UpstreamError } from '../providers/errors.ts';

/**
 * How a job's failure reads to the API's clients: the error the route would have answered, kept storable. An
 * upstream failure is converted as a served call's is (`pipeline/retries.ts` `clientError`), naming the job's model.
 */
export function asJobError(error: unknown, describe: DescribeError, model: string): z.infer<typeof JobError> {
  const refusal = clientError(error, model);
  if (!(refusal instanceof RequestRefused)) {
    return { message: 'The job failed inside the gateway', type: 'api_error', code: 500 };
  }
  const { status, body } = describe(refusal);
  return { message: storableText(body.error.message), type: body.error.type, code: status };
}

/**
 * A refusal of one of the gateway's own follow-up calls about a job the provider took (a status poll): a job it
 * lost, a key it no longer takes. It is the provider failing the job (502), not a fault of what the client sent, as
 * the same refusal of the submission would be (400).
 */
export function followUpFailure(error: unknown): unknown {
  if (!(error instanceof UpstreamError) || error.failure !== 'client') return error;
  return new UpstreamError(
    'unavailable',
    `the provider refused to report on the job: ${error.message}`,
    error.status,
  );
}
