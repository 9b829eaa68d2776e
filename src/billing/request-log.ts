import { createHash, randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { CacheRecord, RequestRecord } from '../../events/request.ts';
import type { KeyHolder } from '../accounts/live-state.ts';
import type { BlobStore } from '../files/blob-store.ts';

const gzipped = promisify(gzip);

/** Where a body of the request log is kept: content-addressed by the SHA-256 of its JSON. */
export function bodyKey(sha256: string): string {
  return `requests/${sha256.slice(0, 2)}/${sha256}.json.gz`;
}

/** The JSON of a body and its SHA-256, the way the log hashes it. */
export function bodyJson(body: unknown): { json: string; sha256: string } {
  const json = JSON.stringify(body);
  return { json, sha256: createHash('sha256').update(json).digest('hex') };
}

/** Bodies written at once; the rest wait their turn, so a burst of requests does not flood the disk or the loop. */
const WRITERS = 2;
/** Bytes of bodies waiting to be written; past it a body is not stored (its hash is still logged). */
const MAX_QUEUED_BYTES = 64 * 1024 * 1024;
/** Hashes stored lately: the same body (a repeated prompt, an identical answer) is written once. */
const RECENT = 10_000;

/**
 * The request log's bodies: gzipped into the blob store under their hash. Writes happen in the background (the
 * answer never waits for them, and the store does not fsync): the event holds the hash, so a body lost in a crash,
 * or not written under overload, is reported missing, never wrong.
 */
export class RequestBodies {
  private readonly recent = new Set<string>();
  private readonly queue: { sha256: string; json: string }[] = [];
  private queuedBytes = 0;
  private writing = 0;
  private skipped = 0;
  private drained: (() => void)[] = [];

  constructor(
    private readonly blobs: BlobStore,
    /** Whether an account's bodies are kept: its own setting, else the gateway's. */
    readonly keeps: (accountId: string) => boolean,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  /** Hashes the body and, when bodies are kept, queues it for the store. */
  save(body: unknown, keep: boolean): string | null {
    if (body === undefined) return null;
    const { json, sha256 } = bodyJson(body);
    if (keep && !this.recent.has(sha256)) {
      if (this.queuedBytes + json.length > MAX_QUEUED_BYTES) {
        if (this.skipped++ % 1000 === 0)
          this.onError(
            new Error('request bodies are arriving faster than the disk takes them; some are not stored'),
          );
        return sha256;
      }
      this.remember(sha256);
      this.queue.push({ sha256, json });
      this.queuedBytes += json.length;
      this.pump();
    }
    return sha256;
  }

  private remember(sha256: string): void {
    this.recent.add(sha256);
    if (this.recent.size > RECENT) {
      const oldest = this.recent.values().next().value;
      if (oldest !== undefined) this.recent.delete(oldest);
    }
  }

  /** Resolves once every queued body is written: a shutdown must not cut the blob store from under a write. */
  drain(): Promise<void> {
    if (this.writing === 0 && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.drained.push(resolve));
  }

  private pump(): void {
    while (this.writing < WRITERS) {
      const next = this.queue.shift();
      if (!next) {
        if (this.writing === 0) for (const resolve of this.drained.splice(0)) resolve();
        return;
      }
      this.writing++;
      this.queuedBytes -= next.json.length;
      gzipped(next.json, { level: 1 })
        .then((bytes) => this.blobs.write(bodyKey(next.sha256), bytes))
        .catch((error) => {
          this.recent.delete(next.sha256);
          this.onError(error);
        })
        .finally(() => {
          this.writing--;
          this.pump();
        });
    }
  }
}

export interface RequestInfo {
  requestId: string;
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
  finish(end: { status: number; costNanos: bigint; holdId: string | null }): RequestRecord | undefined {
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
      accountId: this.info.auth.accountId,
      subAccountId: this.info.auth.subAccountId,
      keyId: this.info.auth.keyId,
      tag: this.tag,
      endpoint: this.info.endpoint,
      requestedModel,
      // The last model tried: the one that served it, or the one whose provider failed.
      model: this.model,
      provider: this.provider,
      status: end.status,
      errorType: served ? null : this.errorType,
      stream: this.stream,
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
