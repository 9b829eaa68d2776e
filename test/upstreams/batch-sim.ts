import type { Incoming, Provider, Reply } from './harness.ts';
import type { Upstream } from './types.ts';

/** How an upstream batch ends: as the provider's own states, serving its first `served` requests (all by default). */
export interface Ending {
  state: 'completed' | 'failed' | 'expired';
  served?: number;
  message?: string;
}

export interface SimRequest {
  key: string;
  /** The chat request as the provider's chat endpoint takes it. */
  call: Pick<Incoming, 'path' | 'body'>;
}

export interface SimBatch {
  id: string;
  /** A name the client gave it (OpenAI's metadata, Gemini's display name). */
  name: string | undefined;
  requests: SimRequest[];
  state: 'running' | 'cancelling' | Ending['state'] | 'cancelled';
  /** The chat reply for each request the batch served, by key. */
  replies: Map<string, Reply>;
  message: string | undefined;
  createdAt: number;
}

/** Batches a simulator holds, and how a test steers them: held in progress, or ended some other way. */
export class BatchBook {
  readonly batches = new Map<string, SimBatch>();
  private held = false;
  private loseReply = false;
  private readonly endings: Ending[] = [];
  private readonly failing = new Map<string, number>();
  private seq = 0;

  constructor(private readonly chat: Provider) {}

  /** Keeps every batch in progress until `release` (a poll then ends it). */
  hold(): void {
    this.held = true;
  }

  release(): void {
    this.held = false;
  }

  /** The next batch is created, but its creation is answered with a 500, as if the reply were lost. */
  loseNextCreateReply(): void {
    this.loseReply = true;
  }

  /** Whether this creation's reply is to be lost (once). */
  replyLost(): boolean {
    const lost = this.loseReply;
    this.loseReply = false;
    return lost;
  }

  /** The next batch to end ends this way. */
  endNext(ending: Ending): void {
    this.endings.push(ending);
  }

  /** The request of this key, in the next batch that serves one, is answered with the provider's own error. */
  failRequest(key: string, status: number): void {
    this.failing.set(key, status);
  }

  create(prefix: string, name: string | undefined, requests: SimRequest[]): SimBatch {
    const batch: SimBatch = {
      id: `${prefix}${String(++this.seq).padStart(6, '0')}`,
      name,
      requests,
      state: 'running',
      replies: new Map(),
      message: undefined,
      createdAt: Math.floor(Date.now() / 1000),
    };
    this.batches.set(batch.id, batch);
    return batch;
  }

  cancel(batch: SimBatch): void {
    if (batch.state === 'running') batch.state = 'cancelling';
  }

  /** Moves a batch on when it is looked at: a held batch stays running; a cancelled one serves nothing more. */
  look(id: string): SimBatch | undefined {
    const batch = this.batches.get(id);
    if (!batch) return undefined;
    if (batch.state === 'cancelling') {
      batch.state = 'cancelled';
      return batch;
    }
    if (batch.state !== 'running' || this.held) return batch;
    const ending = this.endings.shift() ?? { state: 'completed' };
    const served = ending.state === 'failed' ? 0 : (ending.served ?? batch.requests.length);
    for (const [index, request] of batch.requests.entries()) {
      if (index >= served) break;
      const failed = this.failing.get(request.key);
      this.failing.delete(request.key);
      batch.replies.set(
        request.key,
        failed === undefined
          ? this.chat.handle(incoming(request.call, index))
          : this.chat.errorReply(failed, index),
      );
    }
    batch.state = ending.state;
    batch.message = ending.message;
    return batch;
  }
}

function incoming(call: SimRequest['call'], seq: number): Incoming {
  return {
    method: 'POST',
    path: call.path,
    query: {},
    headers: {
      authorization: 'Bearer sim',
      'x-api-key': 'sim',
      'anthropic-version': '2023-06-01',
      'x-goog-api-key': 'sim',
    },
    body: call.body,
    seq: 100_000 + seq,
    invalidJson: false,
  };
}

/** A chat reply's JSON body and status. */
export function replyJson(reply: Reply): { status: number; body: unknown } {
  return { status: reply.status, body: 'body' in reply ? reply.body : null };
}

/** A simulator that also speaks its provider's batch API. */
export type BatchUpstream = Upstream & { batches: BatchBook };
