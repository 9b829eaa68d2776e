import { describeError } from './errors.ts';

/** Anthropic's error types by status (https://docs.anthropic.com/en/api/errors). */
const TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  409: 'conflict_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

/** The gateway's own refusals keep the spec's type in Anthropic's envelope: a client can tell a cap from a top-up. */
const GATEWAY_TYPES = new Set([
  'budget_exceeded',
  'topup_required',
  'model_not_found',
  'provider_error',
  'timeout_error',
]);

export interface AnthropicErrorBody {
  type: 'error';
  /** `code` repeats the HTTP status, as in the gateway's other errors. */
  error: { type: string; message: string; code: number };
  request_id?: string;
}

export function anthropicErrorType(status: number): string {
  return TYPES[status] ?? (status < 500 ? 'invalid_request_error' : 'api_error');
}

/**
 * An error in Anthropic's shape. Status, message and headers are the gateway's own, from its one mapping of
 * errors to HTTP; only the body is reshaped, so both route families refuse the same things the same way.
 */
export function describeAnthropicError(
  error: unknown,
  requestId?: string,
): { status: number; headers: Record<string, string>; body: AnthropicErrorBody } {
  const { status, headers, body } = describeError(error);
  return {
    status,
    headers,
    body: {
      type: 'error',
      error: {
        type: GATEWAY_TYPES.has(body.error.type) ? body.error.type : anthropicErrorType(status),
        message: body.error.message,
        code: status,
      },
      ...(requestId === undefined ? {} : { request_id: requestId }),
    },
  };
}
