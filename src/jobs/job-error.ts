import type { z } from 'zod';
import type { JobError } from '../../events/job.ts';
import { storableText } from '../../events/storable.ts';
import { type DescribeError, RequestRefused } from '../contracts/errors.ts';
import { UpstreamError } from '../providers/errors.ts';

/** How a job's failure reads to the API's clients: the error the route would have answered, kept storable. */
export function asJobError(error: unknown, describe: DescribeError): z.infer<typeof JobError> {
  const refusal =
    error instanceof UpstreamError
      ? new RequestRefused(
          error.failure === 'timeout' ? 'upstream_timeout' : 'upstream_failed',
          `The provider failed the job: ${error.message}`,
        )
      : error;
  if (!(refusal instanceof RequestRefused)) {
    return { message: 'The job failed inside the gateway', type: 'api_error', code: 500 };
  }
  const { status, body } = describe(refusal);
  return { message: storableText(body.error.message), type: body.error.type, code: status };
}
