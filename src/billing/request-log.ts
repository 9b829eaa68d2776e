import { randomUUID } from 'node:crypto';
import type { CacheRecord, RequestRecord } from '../../events/request.ts';
import type { KeyHolder } from '../accounts/live-state.ts';
import type { RequestBodies } from './request-bodies.ts';

export interface RequestInfo {
  /** The gateway's own id of the request, never a client's. */
  requestId: string;
  /** The client's `X-Request-Id`, recorded beside the gateway's id as its correlation id. */
  clientRequestId?: string;
  /** The batch line the request runs, when it is one: its record is then the batch's, scoped as the batch is. */
  batchLine?: { batchId: string; line: number };
  auth: KeyHolder;
  endpoint: string;
  body: unknown;
}

/**
 * One request's record as it is served: the pipeline fills in which model served it, after how many attempts,
 * and what came back; the settlement (or, for a refusal, the HTTP layer) turns it into the event, once.
 */
export class RequestLog {
  readonly logId = `rlog_${randomUUID().replaceAll('-', '')}`;
  private readonly started = performance.now();
  /** When the request arrived: what a feature that names the request by its log id dates it by. */
  readonly at = new Date().toISOString();
  tag: string | null = null;
  model: string | null = null;
  provider: string | null = null;
  attempts = 0;
  fallbacks = 0;
  stream = false;
  /** Set when the request reached the pipeline (the route built its call context). */
  metered = false;
  firstByteMs: number | null = null;
  errorType: string | null = null;
  /** The error's message as the client got it (recorded bounded, for the support desk's "why"). */
  errorMessage: string | null = null;
  /** What the request was charged, once recorded (the per-request log line reads it). */
  costNanos: bigint | null = null;
  usage: Record<string, unknown> | null = null;
  /** What the response cache did (its X-Cache-Status), and for a hit where the answer came from. */
  cacheStatus: string | null = null;
  cache: CacheRecord | null = null;
  /** The automatic router's decision (routing/record.ts), when it chose the model. */
  routing: unknown = null;
  private response: unknown;
  private done = false;

  constructor(
    private readonly bodies: RequestBodies,
    readonly info: RequestInfo,
  ) {}

  get finished(): boolean {
    return this.done;
  }

  tried(model: string, provider: string, index: number): void {
    this.model = model;
    this.provider = provider;
    this.attempts = index + 1;
    this.fallbacks = index;
  }

  firstByte(): void {
    this.firstByteMs ??= Math.round(performance.now() - this.started);
  }

  respond(response: unknown): void {
    this.response ??= response;
  }

  /** A record made for a charge that was then refused: the refusal is recorded instead. */
  reopen(): void {
    this.done = false;
  }

  /** The event's data, once: undefined when the request was already recorded. */
  finish(end: {
    status: number;
    costNanos: bigint;
    holdId: string | null;
    credential?: string;
  }): RequestRecord | undefined {
    if (this.done) return undefined;
    this.done = true;
    this.costNanos = end.costNanos;
    const totalMs = Math.round(performance.now() - this.started);
    const body = this.info.body;
    const requestedModel =
      body && typeof body === 'object' && typeof (body as { model?: unknown }).model === 'string'
        ? (body as { model: string }).model
        : null;
    const served = end.status < 400;
    const keep = this.bodies.keeps(this.info.auth.accountId);
    return {
      logId: this.logId,
      requestId: this.info.requestId,
      ...(this.info.clientRequestId !== undefined && { clientRequestId: this.info.clientRequestId }),
      ...(this.info.batchLine && { batchLine: this.info.batchLine }),
      accountId: this.info.auth.accountId,
      subAccountId: this.info.auth.subAccountId,
      keyId: this.info.auth.keyId,
      ...(this.info.auth.name !== undefined && { keyName: this.info.auth.name }),
      tag: this.tag,
      endpoint: this.info.endpoint,
      requestedModel,
      // The last model tried: the one that served it, or the one whose provider failed.
      model: this.model,
      provider: this.provider,
      status: end.status,
      errorType: served ? null : this.errorType,
      ...(!served && this.errorMessage !== null && { errorMessage: storableMessage(this.errorMessage) }),
      stream: this.stream,
      ...(end.credential !== undefined && { credential: end.credential }),
      usage: this.usage,
      costNanos: end.costNanos.toString(),
      holdId: end.holdId,
      firstByteMs: this.firstByteMs ?? (served ? totalMs : null),
      totalMs,
      attempts: this.attempts,
      fallbacks: this.fallbacks,
      cacheStatus: this.cacheStatus,
      ...(this.cache && { cache: this.cache }),
      routing: this.routing,
      requestSha256: body !== null && typeof body === 'object' ? this.bodies.save(body, keep) : null,
      responseSha256: this.response === undefined ? null : this.bodies.save(this.response, keep),
      bodiesKept: keep,
      at: this.at,
    };
  }
}

/** The longest error message a record keeps: a provider's message can be long, and the log keeps it for ever. */
export const MAX_ERROR_MESSAGE = 1000;

/**
 * The message cut to `MAX_ERROR_MESSAGE` characters (an ellipsis marks the cut), with what PostgreSQL cannot store (a
 * NUL, an unpaired surrogate, which a provider's text may hold) replaced by U+FFFD.
 */
export function storableMessage(message: string): string {
  const cut = message.length > MAX_ERROR_MESSAGE ? `${message.slice(0, MAX_ERROR_MESSAGE - 1)}…` : message;
  // toWellFormed (Node 20) replaces each unpaired surrogate with U+FFFD.
  return (cut as unknown as { toWellFormed(): string }).toWellFormed().replaceAll('\u0000', '\uFFFD');
}
