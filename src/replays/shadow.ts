import type pg from 'pg';
import type { z } from 'zod';
import { evolve, initialState } from '../../commands/replay/decide.ts';
import type { ReplayCommands } from '../../commands/replay/handler.ts';
import { type GatewayEvent, parseAs, parseEvent } from '../../events/index.ts';
import { logicalEvents } from '../../events/logical.ts';
import { type ReplayEvent, type ReplayRequested, replayStream } from '../../events/replay.ts';
import type { RequestRecord } from '../../events/request.ts';
import { type EventStore, START } from '../../events/store.ts';
import { type ChatDeps, completeChat } from '../chat/complete.ts';
import { withAdvisoryLock } from '../db/advisory-lock.ts';
import { score } from './judge.ts';
import { ShadowPauses } from './shadow-pause.ts';
import { asChatRequest, askedText, isReplayable, isSingleTurn, outputText } from './source.ts';
import { type RequestLogReader, SHADOW_DEFAULTS } from './types.ts';

type Shadow = z.infer<typeof ReplayRequested> & { matched: number };

export interface ShadowDeps {
  store: EventStore;
  /**
   * Where each comparison holds its advisory lock, for as long as it runs (the target call and the judge's). Its
   * own pool, of `concurrency` connections: held on the main pool, four comparisons left the rest of the gateway
   * (and their own reads of the request log) one connection, and most of a burst timed out waiting for it.
   */
  pool: pg.Pool;
  chat: ChatDeps;
  log: RequestLogReader;
  commands: ReplayCommands;
  clock: () => Date;
  report: (message: string, error?: unknown) => void;
  concurrency?: number;
  /** How long to wait for a mirrored request's read-model row and bodies to appear. */
  settleMs?: number;
  /** Whether clients are being served right now: comparisons then trickle (see TRICKLE_MS). */
  busy?: () => boolean;
}

/**
 * While clients are being served, at most one comparison starts per this many milliseconds (4 a second): a mirrored
 * call shares the process with live traffic, and unthrottled, at a sample rate of 1, it doubled the clients' latency.
 * The backlog is worked off at full concurrency once traffic pauses for 100 ms.
 */
const TRICKLE_MS = 250;
const RECHECK_MS = 50;

/**
 * Live shadows. It follows the log, not the request path: a request is mirrored only after its
 * `RequestCompleted` is durable, that is after its client was answered, so a shadow can neither delay nor fail it.
 * Which requests are sampled is decided by their order in the log (the k-th matching request is taken when
 * ⌊k·rate⌋ grows), so a restart, which reads the log again, picks the same ones; a comparison already recorded
 * (`ShadowSampled`) is not run again.
 */
export class ShadowWorker {
  private readonly shadows = new Map<string, Shadow>();
  private readonly queue: { shadow: Shadow; record: RequestRecord; k: number }[] = [];
  private readonly controller = new AbortController();
  private running = 0;
  private following: Promise<void> | undefined;
  private readonly idle = new Set<() => void>();
  private lastStarted = Number.NEGATIVE_INFINITY;
  private recheck: NodeJS.Timeout | undefined;
  private readonly pauses: ShadowPauses;

  constructor(private readonly deps: ShadowDeps) {
    this.pauses = new ShadowPauses({ commands: deps.commands, clock: deps.clock, report: deps.report });
  }

  start(): void {
    this.following = this.follow();
  }

  async stop(): Promise<void> {
    this.controller.abort();
    clearTimeout(this.recheck);
    await this.following;
    while (this.running > 0) await new Promise<void>((resolve) => this.idle.add(resolve));
    await this.pauses.settled();
  }

  private async follow(): Promise<void> {
    const signal = this.controller.signal;
    while (!signal.aborted) {
      try {
        for await (const stored of this.deps.store.subscribe(START, signal)) {
          const parsed = parseEvent(stored);
          // A settlement may carry its request's record: the record is what a shadow follows.
          if (parsed.ok) for (const part of logicalEvents(parsed.event)) this.apply(part, stored.occurredAt);
        }
      } catch (error) {
        if (signal.aborted) return;
        this.deps.report('shadow replays: following the log failed, retrying', error);
        this.shadows.clear();
        this.pauses.clear();
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
  }

  private apply(event: GatewayEvent, occurredAt: Date): void {
    this.pauses.follow(event, occurredAt, this.shadows);
    switch (event.type) {
      case 'ReplayRequested':
        if (event.data.shadow) this.shadows.set(event.data.replayId, { ...event.data, matched: 0 });
        return;
      case 'ReplayFailed':
      case 'ShadowStopped':
        this.shadows.delete(event.data.replayId);
        return;
      case 'RequestCompleted':
        for (const shadow of this.shadows.values()) this.consider(shadow, event.data);
        return;
      default:
        return;
    }
  }

  private consider(shadow: Shadow, record: RequestRecord): void {
    if (
      record.accountId !== shadow.accountId ||
      // A sub-account key's shadow mirrors that sub-account's own requests, never its siblings' or the account's.
      (shadow.subAccountId != null && record.subAccountId !== shadow.subAccountId) ||
      // A sub-account's batch lines are its own, as its batches are: a main key's shadow does not mirror them.
      (shadow.subAccountId == null && record.batchLine !== undefined && record.subAccountId !== null) ||
      record.model !== shadow.sourceModel ||
      record.endpoint !== shadow.endpoint ||
      (shadow.sourceTag !== null && record.tag !== shadow.sourceTag) ||
      record.status < 200 ||
      record.status > 299 ||
      record.requestId === shadow.sourceRequestId ||
      record.requestId === shadow.requestId
    ) {
      return;
    }
    shadow.matched += 1;
    const k = shadow.matched;
    if (Math.floor(k * shadow.sampleRate) <= Math.floor((k - 1) * shadow.sampleRate)) return;
    // A paused shadow's payer could not pay for its last comparison: it is not asked again until it may.
    if (this.pauses.isPaused(shadow.replayId)) return;
    this.queue.push({ shadow, record, k });
    this.pump();
  }

  private pump(): void {
    const limit = this.deps.concurrency ?? SHADOW_DEFAULTS.concurrency;
    while (this.running < limit && this.queue.length > 0 && !this.controller.signal.aborted) {
      if (this.deps.busy?.() && performance.now() - this.lastStarted < TRICKLE_MS) {
        this.recheck ??= setTimeout(() => {
          this.recheck = undefined;
          this.pump();
        }, RECHECK_MS);
        return;
      }
      this.lastStarted = performance.now();
      const next = this.queue.shift() as (typeof this.queue)[number];
      this.running += 1;
      const { shadow, record, k } = next;
      const triedAt = this.deps.clock();
      withAdvisoryLock(this.deps.pool, `shadow.${shadow.replayId}.${k}`, this.deps.report, () =>
        this.mirror(shadow, record, k),
      )
        .catch(async (error) => {
          if (!(await this.pauses.failed(shadow, record.requestId, triedAt, error).catch(() => false)))
            this.deps.report(`shadow ${shadow.replayId}: mirroring failed`, error);
        })
        .finally(() => {
          this.running -= 1;
          for (const resolve of this.idle) resolve();
          this.idle.clear();
          this.pump();
        });
    }
  }

  /** Whether the shadow still wants this request: not stopped, not at its limit, not compared already. */
  private async wanted(shadow: Shadow, requestId: string): Promise<boolean> {
    const events = await this.deps.store.readStream(replayStream(shadow.replayId));
    const state = events
      .map((stored) => parseAs<ReplayEvent>(stored))
      .filter((event): event is ReplayEvent => event !== undefined)
      .reduce(evolve, initialState());
    const live = state.status === 'running' || state.status === 'shadowing';
    return live && !state.sampled.has(requestId) && state.sampled.size < state.maxRequests;
  }

  private async mirror(shadow: Shadow, record: RequestRecord, k: number): Promise<void> {
    if (!isReplayable(shadow.endpoint) || !(await this.wanted(shadow, record.requestId))) return;
    const owner = { accountId: shadow.accountId, subAccountId: shadow.subAccountId ?? null };
    const logged = await this.eventually(() => this.deps.log.find(owner, record.requestId));
    // Both bodies: they are written in the background, one perhaps before the other.
    const bodies =
      logged &&
      (await this.eventually(async () => {
        const found = await logged.bodies();
        return found && found.request != null && found.response != null ? found : undefined;
      }));
    if (!logged || !bodies) return; // bodies dropped: nothing to mirror
    const request = asChatRequest(shadow.endpoint, bodies.request, shadow.targetModel);
    if (!isSingleTurn(request)) return;
    const context = {
      // Charged to whoever asked for the shadow: a sub-account's mirrored calls count against its spend cap.
      auth: {
        accountId: shadow.accountId,
        keyId: shadow.keyId,
        keyHash: '',
        subAccountId: shadow.subAccountId ?? null,
      },
      requestId: `${shadow.replayId}-shadow-${k}`,
      tag: 'shadow',
      signal: this.controller.signal,
    };
    const served = await completeChat(this.deps.chat, context, request, 'batch');
    const source = outputText(bodies.response);
    const target = outputText(served.completion);
    const scored = await score(this.deps.chat, context, 'batch', askedText(request), source, target);
    await this.deps.commands.handle(
      shadow.replayId,
      {
        type: 'RecordSample',
        sample: {
          replayId: shadow.replayId,
          sourceRequestId: record.requestId,
          targetRequestId: context.requestId,
          costSourceNanos: logged.costNanos.toString(),
          costTargetNanos: served.costNanos.toString(),
          judgeCostNanos: (scored.judge?.costNanos ?? 0n).toString(),
          latencySourceMs: Math.max(0, Math.round(record.totalMs)),
          latencyTargetMs: Math.max(0, Math.round(served.latencyMs)),
          scoreDelta: scored.delta,
          scoring: scored.scoring,
        },
      },
      { now: this.deps.clock(), causationId: shadow.requestId },
    );
  }

  /** The request log's row and bodies trail the event a little (a projection, a background write). */
  private async eventually<T>(probe: () => Promise<T | undefined>): Promise<T | undefined> {
    const deadline = Date.now() + (this.deps.settleMs ?? 10_000);
    for (let wait = 20; ; wait = Math.min(wait * 2, 500)) {
      const value = await probe();
      if (value !== undefined || Date.now() > deadline || this.controller.signal.aborted) return value;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}
