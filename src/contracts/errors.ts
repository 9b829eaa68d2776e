/**
 * Why the gateway refuses a request, in domain terms. Domain code throws `RequestRefused`; src/http/errors.ts
 * alone turns a kind into a status and an error body, so no feature names an HTTP status.
 */
export type RefusalKind =
  /** The request itself is wrong (a field, a model that cannot serve it, a limit of the model). */
  | 'invalid'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'model_not_found'
  /** The client sent its body too slowly. */
  | 'request_timeout'
  | 'too_large'
  | 'unsupported_media_type'
  | 'headers_too_large'
  /** A plain HTTP request where a WebSocket upgrade is expected. */
  | 'upgrade_required'
  /** The account's prepaid balance cannot cover the hold. */
  | 'insufficient_balance'
  /** A sub-account's spend cap or a tag's monthly budget cannot cover the hold. */
  | 'budget_exceeded'
  | 'rate_limited'
  /** The provider failed, or answered something unusable. */
  | 'upstream_failed'
  | 'upstream_timeout'
  /** A model alias whose eval has not completed a run yet (`eval:<id>`). */
  | 'eval_not_ready'
  /** The gateway cannot serve it right now (shutting down, its store away); the client may retry. */
  | 'unavailable';

export class RequestRefused extends Error {
  override readonly name = 'RequestRefused';
  constructor(
    readonly kind: RefusalKind,
    message: string,
    /** Response headers the refusal carries: Retry-After, or the X-* lines of a call that was charged. */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

/** A refusal of one field: the message names it first, as every 400 of the API does. */
export const invalidField = (field: string, why: string) =>
  new RequestRefused('invalid', `'${field}': ${why}`);

/** An error as an API client sees it: status, the `{error:{message,type,param,code}}` body, and headers. */
export interface DescribedError {
  status: number;
  /** `param` names the field at fault, as OpenAI's errors do; null when no one field is. */
  body: { error: { message: string; type: string; param: string | null; code: number } };
  headers: Record<string, string>;
}

/**
 * src/http/errors.ts's `describeError`, handed to the code that reports errors outside a response (batch output
 * lines, stored job errors, a realtime stream's close), so they read exactly as the API's own.
 */
export type DescribeError = (error: unknown) => DescribedError;
