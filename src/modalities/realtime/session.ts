import type { RawData, WebSocket } from 'ws';
import { type DescribedError, type DescribeError, RequestRefused } from '../../contracts/errors.ts';
import type { LiveAdapter } from '../../contracts/realtime.ts';
import { clientError } from '../../pipeline/retries.ts';
import type { SlicedHolds } from '../../pipeline/sliced.ts';
import { type AudioMeter, CODED_STREAM_MAX_MS } from './meter.ts';

/** Close codes: 1000 a stream that ended normally, 1001 a gateway shutting down, else 4000 + the error's status. */
export const closeCodeOf = (error: DescribedError | undefined) => (error ? 4000 + error.status : 1000);
const GOING_AWAY = 1001;
/** Audio waiting to go up past this, the client's socket is no longer read until half of it has gone. */
const HIGH_WATER_BYTES = 4 * 1024 * 1024;

export interface SessionOptions {
  client: WebSocket;
  upstream: WebSocket;
  adapter: LiveAdapter;
  /** The stream's money, in milliseconds of audio (`slices.ts`). */
  holds: SlicedHolds;
  modelId: string;
  /** How long the bytes may last: raw audio's duration, or coded audio's worst case (the provider's durations bill). */
  meter: AudioMeter;
  /** How long the provider may take to summarise after the stream is closed. */
  closeTimeoutMs: number;
  log: (error: unknown, message: string) => void;
  /** The API's own error bodies, for the Error message and the close code. */
  describeError: DescribeError;
}

interface Ending {
  error?: RequestRefused;
  /** The client went away: nothing more is sent to it. */
  clientGone?: boolean;
  shutdown?: boolean;
}

/**
 * One client's stream relayed to the provider's: audio and control messages up, the provider's messages down
 * unchanged. Audio is forwarded only as far as the holds cover it; a refused slice ends the stream there (the error
 * first, then the provider's last results and summary, then the close). The summary (`Metadata`) comes last and the
 * socket closes normally after it.
 */
export class RealtimeSession {
  private bytesSent = 0;
  private reportedMs = 0;
  private metadata: { text: string; durationMs: number } | undefined;
  private ending: Ending | undefined;
  private finished = false;
  private errorSent = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly limit: NodeJS.Timeout | undefined;
  private work: Promise<void> = Promise.resolve();
  private resolveDone: () => void = () => {};
  readonly done = new Promise<void>((resolve) => {
    this.resolveDone = resolve;
  });

  constructor(private readonly o: SessionOptions) {
    o.client.on('message', (data, isBinary) => this.fromClient(data, isBinary));
    o.client.on('close', () => this.end({ clientGone: true }));
    o.client.on('error', () => {});
    o.upstream.on('message', (data) => this.fromUpstream(data.toString()));
    o.upstream.on('close', (code, reason) => this.upstreamClosed(code, reason.toString()));
    o.upstream.on('error', () => {});
    if (o.upstream.readyState !== o.upstream.OPEN) {
      queueMicrotask(() => this.upstreamClosed(1006, 'the stream closed before it started'));
    }
    if (!o.meter.exact) {
      this.limit = setTimeout(() => this.end({ error: codedStreamTooLong() }), CODED_STREAM_MAX_MS);
      this.limit.unref();
    }
  }

  /** The gateway is stopping: the stream is summarised and closed with 1001. */
  async shutdown(): Promise<void> {
    this.end({
      shutdown: true,
      error: new RequestRefused('unavailable', 'The gateway is shutting down; reconnect to continue'),
    });
    await this.done;
  }

  private fromClient(data: RawData, isBinary: boolean): void {
    if (this.ending) return;
    const bytes = Buffer.isBuffer(data)
      ? data
      : Array.isArray(data)
        ? Buffer.concat(data)
        : Buffer.from(data);
    if (isBinary) {
      this.serially(() => this.forwardAudio(bytes));
      return;
    }
    // Control messages are a few bytes: a larger text is none of them, and is not parsed (a wide one would hold
    // the event loop, as a wide request body would).
    const large = bytes.length > CONTROL_MESSAGE_MAX_BYTES;
    const type = large ? undefined : messageType(bytes.toString());
    if (type === 'CloseStream') this.serially(async () => this.end({}));
    else if (type === 'KeepAlive' || type === 'Finalize')
      this.serially(async () => this.toUpstream(bytes.toString()));
    else {
      this.sendError(
        new RequestRefused(
          'invalid',
          `Unknown message ${large ? `(a text of ${bytes.length} bytes, over the ${CONTROL_MESSAGE_MAX_BYTES} of a control message)` : type === undefined ? '(not JSON with a type)' : `type '${type}'`}: send binary audio, {"type":"KeepAlive"}, {"type":"Finalize"} or {"type":"CloseStream"}`,
        ),
        true,
      );
    }
  }

  /** Audio goes up only once the most it can last is held; coded audio's actual duration is settled later. */
  private async forwardAudio(bytes: Buffer): Promise<void> {
    if (this.ending) return;
    const { meter, holds } = this.o;
    const wantedMs = meter.msOf(this.bytesSent + bytes.length);
    const allowedMs = await holds.cover(wantedMs);
    if (this.ending) return;
    const allowed = allowedMs < wantedMs ? meter.bytesWithin(allowedMs) - this.bytesSent : bytes.length;
    if (allowed > 0) {
      this.toUpstream(bytes.subarray(0, allowed));
      this.bytesSent += allowed;
      if (meter.exact) holds.used(meter.msOf(this.bytesSent));
    }
    if (allowed < bytes.length) this.end({ error: holds.refusal });
    await this.drain();
  }

  /** A client sending faster than the provider takes the audio waits (TCP backpressure) instead of filling memory. */
  private async drain(): Promise<void> {
    const { client, upstream } = this.o;
    if (upstream.bufferedAmount <= HIGH_WATER_BYTES) return;
    client.pause();
    while (
      !this.ending &&
      upstream.readyState === upstream.OPEN &&
      upstream.bufferedAmount > HIGH_WATER_BYTES / 2
    ) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    client.resume();
  }

  private fromUpstream(text: string): void {
    const message = this.o.adapter.parse(text);
    if (message.type === 'Metadata') {
      this.metadata = { text, durationMs: message.durationMs };
      void this.finish();
      return;
    }
    if (message.type === 'Results' && message.endMs > this.reportedMs) {
      this.reportedMs = message.endMs;
      const { meter, holds } = this.o;
      // Coded audio is charged as the provider reports it; past its worst case (audio sparser than the floor), the
      // holds follow the reports, and a refusal ends the stream where they stop.
      if (!meter.exact && !this.finished) {
        holds.used(this.reportedMs);
        void holds.cover(this.reportedMs);
        if (holds.refusal && this.reportedMs >= holds.covered) this.end({ error: holds.refusal });
      }
    }
    this.toClient(text);
  }

  private upstreamClosed(code: number, reason: string): void {
    if (this.finished) return;
    // After CloseStream the provider closes once it has summarised; closing without a summary is a failure.
    if (this.metadata) return;
    const failure = clientError(this.o.adapter.closeFailure(code, reason), this.o.modelId);
    this.ending ??= {};
    this.ending.error ??=
      failure instanceof RequestRefused ? failure : new RequestRefused('upstream_failed', String(failure));
    void this.finish();
  }

  /** Stops taking audio and asks the provider to summarise; the stream finishes on the summary or a timeout. */
  private end(ending: Ending): void {
    if (ending.clientGone && this.ending) this.ending.clientGone = true;
    if (this.ending) return;
    this.ending = ending;
    if (ending.error) this.sendError(ending.error);
    this.toUpstream(this.o.adapter.closeMessage);
    this.timer = setTimeout(() => {
      if (this.ending && !ending.error && !ending.clientGone) {
        this.ending.error = new RequestRefused(
          'upstream_timeout',
          `The provider did not summarise the stream within ${this.o.closeTimeoutMs} ms: ${this.o.modelId}`,
        );
      }
      void this.finish();
    }, this.o.closeTimeoutMs);
  }

  private async finish(): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    clearTimeout(this.timer);
    clearTimeout(this.limit);
    await this.work.catch(() => {});
    const { meter, holds, client, upstream } = this.o;
    const counted = meter.exact ? meter.msOf(this.bytesSent) : this.reportedMs;
    const totalMs = Math.max(counted, this.metadata?.durationMs ?? 0);
    const failed = this.ending?.error !== undefined && !this.metadata;
    await holds.finish(totalMs, failed ? 'failed' : 'cancelled').catch((error: unknown) => {
      this.o.log(error, 'realtime: settling the stream failed');
    });
    const error = this.ending?.error;
    if (this.metadata) this.toClient(this.metadata.text);
    if (error) this.sendError(error);
    if (client.readyState === client.OPEN) {
      const described = error && this.o.describeError(error);
      client.close(this.ending?.shutdown ? GOING_AWAY : closeCodeOf(described), closeReason(described));
    }
    if (upstream.readyState === upstream.OPEN) upstream.close(1000);
    else if (upstream.readyState === upstream.CONNECTING) upstream.terminate();
    this.resolveDone();
  }

  private sendError(error: RequestRefused, again = false): void {
    if (this.errorSent && !again) return;
    this.errorSent ||= !again;
    const { body } = this.o.describeError(error);
    this.toClient(JSON.stringify({ type: 'Error', message: body.error.message, error: body.error }));
  }

  private toClient(text: string): void {
    if (this.o.client.readyState === this.o.client.OPEN && !this.ending?.clientGone) this.o.client.send(text);
  }

  private toUpstream(data: string | Buffer): void {
    if (this.o.upstream.readyState === this.o.upstream.OPEN) this.o.upstream.send(data);
  }

  private serially(step: () => Promise<void>): void {
    this.work = this.work
      .then(step)
      .catch((error: unknown) => this.o.log(error, 'realtime: relaying failed'));
  }
}

const codedStreamTooLong = () =>
  new RequestRefused(
    'too_large',
    `A stream of compressed or container audio lasts at most ${CODED_STREAM_MAX_MS / 3_600_000} hours (its worst case stays held until the provider reports it); open a new stream to go on, or send raw audio (encoding=linear16 with sample_rate), which has no such limit`,
  );

/** The largest text message read as a control message (`{"type":"KeepAlive"}` and the like). */
const CONTROL_MESSAGE_MAX_BYTES = 1024;

function messageType(text: string): string | undefined {
  try {
    const message: unknown = JSON.parse(text);
    if (
      typeof message === 'object' &&
      message !== null &&
      'type' in message &&
      typeof message.type === 'string'
    ) {
      return message.type;
    }
  } catch {}
  return undefined;
}

/** A close frame's reason is at most 123 bytes. */
function closeReason(error: DescribedError | undefined): string {
  if (!error) return '';
  const reason = error.body.error.type;
  return Buffer.byteLength(reason) <= 123 ? reason : reason.slice(0, 100);
}
