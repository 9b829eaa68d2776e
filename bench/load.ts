/**
 * The load generator: in the bench's own process, on undici's dispatcher API (no promise, stream or body
 * parsing per request), so that it takes as little of the machine's two cores as it can.
 *
 * - closed loop: N connections, each sending its next request when the last one is answered (saturation);
 * - open loop: sends on a fixed timetable whatever the answers do, and measures every request from the time
 *   it was due, so a target that falls behind shows its queueing in the latencies (no coordinated omission).
 */
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { Agent, type Dispatcher } from 'undici';

export interface Endpoint {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  path: string;
  /** Headers of every request (authorisation, provider headers), beside content-type and x-request-id. */
  headers: Record<string, string>;
  /** When given, requests take these in turn over `headers` (one API key per account, for instance). */
  rotate?: Record<string, string>[];
}

let turn = 0;
function headersOf(endpoint: Endpoint, requestId: string): Record<string, string> {
  const extra = endpoint.rotate?.[turn++ % endpoint.rotate.length];
  return { ...endpoint.headers, ...extra, 'content-type': 'application/json', 'x-request-id': requestId };
}

/** What every request sent to one target came to: the ids answered 200, for the charge check. */
export class Ledger {
  readonly ok: string[] = [];
  readonly failed = new Map<string, number>();
  private seq = 0;
  constructor(readonly prefix: string) {}
  nextId(): string {
    return `${this.prefix}${(this.seq++).toString(36)}`;
  }
  get sent(): number {
    return this.seq;
  }
  record(id: string, status: number): void {
    if (status === 200) this.ok.push(id);
    else this.failed.set(id, status);
  }
}

interface Shot {
  /** HTTP status; 0 when the request failed without one (connection error, timeout, abort). */
  status: number;
  firstByteAt: number;
  endAt: number;
  /** For streams: the body ended with `data: [DONE]`. */
  complete: boolean;
  error?: string;
}

const TIMEOUT_MS = 30_000;
const DONE = Buffer.from('data: [DONE]');

/** One request through the dispatcher; calls `done` once. Returns a function that aborts it. */
function shoot(
  dispatcher: Dispatcher,
  endpoint: Endpoint,
  body: Buffer,
  requestId: string,
  stream: boolean,
  done: (shot: Shot) => void,
): () => void {
  let status = 0;
  let firstByteAt = 0;
  let tail: Buffer | undefined;
  let finished = false;
  let abort: ((reason: Error) => void) | undefined;
  let aborted = false;
  const finish = (shot: Shot) => {
    if (finished) return;
    finished = true;
    done(shot);
  };
  dispatcher.dispatch(
    {
      origin: endpoint.origin,
      path: endpoint.path,
      method: 'POST',
      headers: headersOf(endpoint, requestId),
      body,
      headersTimeout: TIMEOUT_MS,
      bodyTimeout: TIMEOUT_MS,
    },
    {
      onRequestStart(controller) {
        abort = (reason) => controller.abort(reason);
        if (aborted) controller.abort(new Error('aborted'));
      },
      onResponseStart(_controller, statusCode) {
        status = statusCode;
      },
      onResponseData(_controller, chunk) {
        if (firstByteAt === 0) firstByteAt = performance.now();
        if (stream) tail = chunk;
      },
      onResponseEnd() {
        const endAt = performance.now();
        const complete = !stream || (tail !== undefined && tail.lastIndexOf(DONE) >= 0);
        finish({ status, firstByteAt: firstByteAt || endAt, endAt, complete });
      },
      onResponseError(_controller, error) {
        const endAt = performance.now();
        finish({
          status: 0,
          firstByteAt: firstByteAt || endAt,
          endAt,
          complete: false,
          error: error.message,
        });
      },
    },
  );
  return () => {
    aborted = true;
    abort?.(new Error('aborted: the bench stopped waiting'));
  };
}

export interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export function percentiles(values: Float64Array | number[]): Percentiles | undefined {
  if (values.length === 0) return undefined;
  const sorted = Float64Array.from(values).sort();
  // Nearest rank.
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number;
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    p50: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    max: sorted[sorted.length - 1] as number,
    mean: sum / sorted.length,
  };
}

function countErrors(statuses: Map<string, number>, shot: Shot): void {
  const key = shot.status === 0 ? `error: ${shot.error ?? 'unknown'}` : `${shot.status}`;
  statuses.set(key, (statuses.get(key) ?? 0) + 1);
}

export interface ClosedLoopResult {
  connections: number;
  seconds: number;
  /** Requests answered 200 per second. */
  rps: number;
  ok: number;
  errors: number;
  /** Non-200 outcomes by status (or error message). */
  failures: Record<string, number>;
  latencyMs: Percentiles | undefined;
}

/** `connections` loops, each sending the next request as soon as the last is answered, for `seconds`. */
export async function closedLoop(
  endpoint: Endpoint,
  body: Buffer,
  connections: number,
  seconds: number,
  ledger: Ledger,
): Promise<ClosedLoopResult> {
  const agent = new Agent({ connections, pipelining: 1, keepAliveTimeout: 60_000 });
  const latencies: number[] = [];
  const failures = new Map<string, number>();
  let ok = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  let lastEnd = start;
  await new Promise<void>((resolve) => {
    let active = connections;
    const loop = () => {
      const sentAt = performance.now();
      if (sentAt >= end) {
        if (--active === 0) resolve();
        return;
      }
      const id = ledger.nextId();
      shoot(agent, endpoint, body, id, false, (shot) => {
        ledger.record(id, shot.status);
        lastEnd = shot.endAt;
        if (shot.status === 200) {
          ok++;
          latencies.push(shot.endAt - sentAt);
        } else countErrors(failures, shot);
        loop();
      });
    };
    for (let i = 0; i < connections; i++) loop();
  });
  await agent.close();
  const elapsed = (lastEnd - start) / 1000;
  return {
    connections,
    seconds: elapsed,
    rps: ok / elapsed,
    ok,
    errors: [...failures.values()].reduce((a, b) => a + b, 0),
    failures: Object.fromEntries(failures),
    latencyMs: percentiles(latencies),
  };
}

export interface OpenLoopResult {
  rate: number;
  seconds: number;
  sent: number;
  ok: number;
  errors: number;
  failures: Record<string, number>;
  /** Answers 200 per second, from the first due time to the last answer. */
  achievedRps: number;
  /** True when the target kept up: errors ≤ 1% and the achieved rate ≥ 95% of the offered one. */
  keptUp: boolean;
  /** Why not, when it did not. */
  verdict?: string;
  /** From the due time to the end of the response, for answers 200. */
  latencyMs: Percentiles | undefined;
  /** For streams: from the due time to the first byte of the body. */
  firstByteMs?: Percentiles;
  /** How late the generator sent (actual − due): its own share of the latencies. */
  sendLagMs: Percentiles | undefined;
  /** Most requests in flight at once. */
  maxInFlight: number;
}

/**
 * Sends `rate` requests a second for `seconds` on a fixed timetable, whatever the answers do, and measures each
 * from the time it was due. Requests still unanswered `drainSeconds` after the last was due are aborted and
 * counted as errors.
 */
export async function openLoop(
  endpoint: Endpoint,
  body: Buffer,
  options: { rate: number; seconds: number; stream: boolean; drainSeconds: number; maxConnections: number },
  ledger: Ledger,
): Promise<OpenLoopResult> {
  const { rate, seconds, stream } = options;
  const agent = new Agent({ connections: options.maxConnections, pipelining: 1, keepAliveTimeout: 60_000 });
  const total = Math.round(rate * seconds);
  const interval = 1000 / rate;
  const latencies = new Float64Array(total);
  const firstBytes = new Float64Array(total);
  const lags = new Float64Array(total);
  const failures = new Map<string, number>();
  const aborts = new Set<() => void>();
  let ok = 0;
  let answered = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  let lastEnd = 0;
  const t0 = performance.now() + 50;
  let pacer: Worker | undefined;

  await new Promise<void>((resolve) => {
    let next = 0;
    let drainTimer: NodeJS.Timeout | undefined;
    const settle = () => {
      if (next >= total && answered >= total) {
        clearTimeout(drainTimer);
        resolve();
      }
    };
    const send = (i: number, due: number) => {
      const id = ledger.nextId();
      lags[i] = performance.now() - due;
      inFlight++;
      if (inFlight > maxInFlight) maxInFlight = inFlight;
      let abort: (() => void) | undefined;
      abort = shoot(agent, endpoint, body, id, stream, (shot) => {
        if (abort) aborts.delete(abort);
        inFlight--;
        answered++;
        const status = shot.status === 200 && !shot.complete ? 0 : shot.status;
        ledger.record(id, shot.status);
        lastEnd = shot.endAt;
        if (status === 200) {
          latencies[ok] = shot.endAt - due;
          firstBytes[ok] = shot.firstByteAt - due;
          ok++;
        } else countErrors(failures, shot.status === 200 ? { ...shot, error: 'stream incomplete' } : shot);
        settle();
      });
      aborts.add(abort);
    };
    const sendUpTo = (upTo: number) => {
      while (next <= upTo && next < total) {
        send(next, t0 + next * interval);
        next++;
      }
      if (next < total) return;
      drainTimer = setTimeout(() => {
        for (const abort of [...aborts]) abort();
      }, options.drainSeconds * 1000);
      settle();
    };
    pacer = startPacer(performance.timeOrigin + t0, interval, total, sendUpTo);
  });
  await pacer?.terminate();
  await agent.close();

  const errors = total - ok;
  const achievedRps = ok / (Math.max(lastEnd - t0, seconds * 1000) / 1000);
  let verdict: string | undefined;
  if (errors > total * 0.01) verdict = `${((errors / total) * 100).toFixed(1)}% errors`;
  else if (achievedRps < rate * 0.95) verdict = `fell behind: ${achievedRps.toFixed(0)} of ${rate} req/s`;
  return {
    rate,
    seconds,
    sent: total,
    ok,
    errors,
    failures: Object.fromEntries(failures),
    achievedRps,
    keptUp: verdict === undefined,
    verdict,
    latencyMs: percentiles(latencies.subarray(0, ok)),
    firstByteMs: stream ? percentiles(firstBytes.subarray(0, ok)) : undefined,
    sendLagMs: percentiles(lags),
    maxInFlight,
  };
}

/**
 * The open loop's clock: a worker thread that sleeps until each request is due (Atomics.wait, to a fraction of a
 * millisecond; Node's timers have a resolution of 1 ms, which would add up to a millisecond of lateness to every
 * request) and then tells the main thread the index of the last request due. It sleeps instead of spinning, so
 * it costs the targets no CPU.
 */
function startPacer(
  startAbs: number,
  interval: number,
  total: number,
  onDue: (upTo: number) => void,
): Worker {
  const worker = new Worker(PACER_SOURCE, { eval: true, workerData: { startAbs, interval, total } });
  worker.on('message', onDue);
  return worker;
}

const PACER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { performance } = require('node:perf_hooks');
const cell = new Int32Array(new SharedArrayBuffer(4));
const { startAbs, interval, total } = workerData;
const now = () => performance.timeOrigin + performance.now();
let i = 0;
while (i < total) {
  const remaining = startAbs + i * interval - now();
  if (remaining > 0) Atomics.wait(cell, 0, 0, remaining);
  const t = now();
  let upTo = i;
  while (upTo + 1 < total && startAbs + (upTo + 1) * interval <= t) upTo++;
  parentPort.postMessage(upTo);
  i = upTo + 1;
}
`;
