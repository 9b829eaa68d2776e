import type { FastifyError } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { DomainError, type DomainErrorKind } from '../../commands/errors.ts';
import { TopUpRequired } from '../../commands/subaccount/decide.ts';
import { type DescribedError, type RefusalKind, RequestRefused } from '../contracts/errors.ts';
import { isDatabaseUnavailable } from '../db/unavailable.ts';

/** Every `type` the API can answer with; `code` in the body is always the HTTP status, `param` the field or null. */
export type ApiErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'conflict_error'
  | 'rate_limit_error'
  | 'budget_exceeded'
  | 'insufficient_balance'
  | 'topup_required'
  | 'model_not_found'
  | 'eval_not_ready'
  | 'provider_error'
  | 'timeout_error'
  | 'api_error';

export const unauthenticated = (message: string) => new RequestRefused('unauthenticated', message);

export type { DescribedError };
export type ErrorBody = DescribedError['body'];

/** An embedded PostgreSQL restarts within a second or two. */
const STORE_RETRY = { 'retry-after': '2' };

const domainStatus: Record<DomainErrorKind, [number, ApiErrorType]> = {
  invalid: [400, 'invalid_request_error'],
  not_found: [404, 'not_found_error'],
  conflict: [409, 'conflict_error'],
};

/** The status and `type` of each refusal; `code` in the body is the status. */
function refusalStatus(kind: RefusalKind): [number, ApiErrorType] {
  switch (kind) {
    case 'invalid':
      return [400, 'invalid_request_error'];
    case 'unauthenticated':
      return [401, 'authentication_error'];
    case 'insufficient_balance':
      return [402, 'insufficient_balance'];
    case 'budget_exceeded':
      return [402, 'budget_exceeded'];
    case 'forbidden':
      return [403, 'permission_error'];
    case 'not_found':
      return [404, 'not_found_error'];
    case 'model_not_found':
      return [404, 'model_not_found'];
    case 'eval_not_ready':
      return [409, 'eval_not_ready'];
    case 'request_timeout':
      return [408, 'invalid_request_error'];
    case 'too_large':
      return [413, 'invalid_request_error'];
    case 'unsupported_media_type':
      return [415, 'invalid_request_error'];
    case 'headers_too_large':
      return [431, 'invalid_request_error'];
    case 'upgrade_required':
      return [426, 'invalid_request_error'];
    case 'rate_limited':
      return [429, 'rate_limit_error'];
    case 'upstream_failed':
      return [502, 'provider_error'];
    case 'unavailable':
      return [503, 'api_error'];
    case 'upstream_timeout':
      return [504, 'timeout_error'];
    default: {
      const _exhaustive: never = kind;
      return _exhaustive;
    }
  }
}

/** The one place where an error becomes an HTTP status and body. */
export function describeError(error: unknown): DescribedError {
  const [status, type, message, headers] = classify(error);
  // `param` is always there, null when no one field is at fault: OpenAI's error object requires it.
  const param = paramOf(error, type, message) ?? null;
  return { status, body: { error: { message, type, param, code: status } }, headers };
}

/**
 * The field at fault, as OpenAI's `param` names it (its clients show it): a validation issue's path, `model` for an
 * unknown model, else the field a refusal's message starts with (`'max_tokens': at most ...`); undefined when no
 * one field is at fault.
 */
function paramOf(error: unknown, type: ApiErrorType, message: string): string | undefined {
  if (hasZodFastifySchemaValidationErrors(error)) {
    const path = error.validation[0]?.instancePath.replace(/^\//, '').replaceAll('/', '.');
    if (path) return path;
  }
  if (type === 'model_not_found') return 'model';
  const named = /^(?:Invalid \w+: )?'([^']{1,100})': /.exec(message);
  return named?.[1];
}

function classify(error: unknown): [number, ApiErrorType, string, Record<string, string>] {
  if (error instanceof RequestRefused) {
    const [status, type] = refusalStatus(error.kind);
    return [status, type, error.message, { ...error.headers }];
  }
  if (error instanceof TopUpRequired) return [402, 'topup_required', error.message, {}];
  if (error instanceof DomainError) {
    const [status, type] = domainStatus[error.kind];
    return [status, type, error.message, {}];
  }
  if (hasZodFastifySchemaValidationErrors(error)) {
    const where = (error as FastifyError).validationContext ?? 'body';
    const issues = error.validation.map((issue) => {
      const path = issue.instancePath.replace(/^\//, '').replaceAll('/', '.');
      return `${path ? `'${path}'` : where}: ${issue.message}`;
    });
    return [400, 'invalid_request_error', `Invalid ${where}: ${issues.join('; ')}`, {}];
  }
  const fastifyError = error as Partial<FastifyError>;
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return [400, 'invalid_request_error', `Malformed JSON body: ${fastifyError.message}`, {}];
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return [413, 'invalid_request_error', 'Request body is too large', {}];
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return [
        415,
        'invalid_request_error',
        'Unsupported Content-Type: send application/json (multipart/form-data where a route takes files)',
        {},
      ];
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return [414, 'invalid_request_error', 'A path parameter is longer than 100 characters', {}];
    case 'FST_ERR_BAD_URL':
      return [400, 'invalid_request_error', 'The URL is not validly percent-encoded', {}];
    case 'FST_CP_ERR_INVALID_CONTENT':
      // @fastify/compress marks the decoder's own error with this code; its message is zlib's.
      return [
        400,
        'invalid_request_error',
        "'content-encoding': the body does not decode as its Content-Encoding says",
        {},
      ];
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return [400, 'invalid_request_error', 'The body is not as long as its Content-Length says', {}];
    default:
      break;
  }
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return [status, 'invalid_request_error', fastifyError.message ?? 'Bad request', {}];
  }
  if (isDatabaseUnavailable(error)) {
    // The store is restarting or unreachable: a passing state, so the client is told when to try again.
    return [
      503,
      'api_error',
      'The gateway cannot reach its database right now; retry the request',
      STORE_RETRY,
    ];
  }
  return [500, 'api_error', 'The gateway failed to process the request', {}];
}
