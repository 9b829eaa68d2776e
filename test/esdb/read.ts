import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import type { ReadReq, ReadResp as ReadRespMessage } from '@eventstore/db-client/generated/streams_pb.js';
import { type ServerWritableStream, status } from '@grpc/grpc-js';
import { type EventFilter, parseFilter } from './filter.ts';
import { eventResp, ReadResp, streamIdentifier, streamName } from './proto.ts';
import type { EventLog, StoredEvent } from './store.ts';

type Call = ServerWritableStream<ReadReq, ReadRespMessage>;
type Send = (message: ReadRespMessage) => Promise<void>;

// Values of the proto enums, which are plain numbers on the wire.
const BACKWARDS = 1;
const REVISION = 2;
const START = 3;
const POSITION = 1;
const ALL_START = 2;

/** Serves reads and catch-up subscriptions; `open` lets the server end live calls on shutdown. */
export function readHandler(log: EventLog, open: Set<AbortController>) {
  return (call: Call): void => {
    const controller = new AbortController();
    open.add(controller);
    call.on('cancelled', () => controller.abort());
    serve(log, call, controller.signal)
      .catch((error: unknown) => {
        if (!call.cancelled) call.emit('error', { code: status.INTERNAL, details: String(error) });
      })
      .finally(() => {
        open.delete(controller);
        if (!call.cancelled && !call.writableEnded) call.end();
      });
  };
}

async function serve(log: EventLog, call: Call, signal: AbortSignal): Promise<void> {
  const options = call.request.getOptions();
  if (!options) throw new Error('Read request without options');
  const structuredUuid = options.getUuidOption()?.hasStructured() ?? false;
  const send: Send = async (message) => {
    if (signal.aborted || call.write(message)) return;
    await once(call, 'drain', { signal }).catch(() => undefined);
  };
  const sendEvent = (event: StoredEvent): Promise<void> => send(eventResp(event, structuredUuid));
  const filter = parseFilter(options);

  if (options.hasSubscription()) {
    await subscribe(log, options, filter, signal, send, sendEvent);
    return;
  }

  const backwards = options.getReadDirection() === BACKWARDS;
  const limit = options.hasCount() ? BigInt(options.getCount()) : BigInt(Number.MAX_SAFE_INTEGER);
  const stream = options.getStream();
  let events: readonly StoredEvent[] = log.all;
  let start: number;
  if (stream) {
    const name = streamName(stream.getStreamIdentifier());
    const found = log.stream(name);
    if (!found) {
      const notFound = new ReadResp.StreamNotFound().setStreamIdentifier(streamIdentifier(name));
      await send(new ReadResp().setStreamNotFound(notFound));
      return;
    }
    events = found;
    start = streamReadStart(stream, found.length, backwards);
  } else {
    start = allReadStart(options.getAll(), log.all, backwards);
  }

  let sent = 0n;
  for (let i = start; i >= 0 && i < events.length && sent < limit; i += backwards ? -1 : 1) {
    if (signal.aborted) return;
    const event = events[i];
    // Filters only apply to $all, as on a real node.
    if (!event || (!stream && filter && !filter.matches(event))) continue;
    await sendEvent(event);
    sent++;
  }
}

async function subscribe(
  log: EventLog,
  options: ReadReq.Options,
  filter: EventFilter | undefined,
  signal: AbortSignal,
  send: Send,
  sendEvent: (event: StoredEvent) => Promise<void>,
): Promise<void> {
  const stream = options.getStream();
  const name = stream ? streamName(stream.getStreamIdentifier()) : '';
  const source = (): readonly StoredEvent[] => (stream ? (log.stream(name) ?? []) : log.all);
  let cursor = stream
    ? streamSubscriptionStart(stream, source().length)
    : allSubscriptionStart(options, log.all);

  const confirmation = new ReadResp.SubscriptionConfirmation().setSubscriptionId(randomUUID());
  await send(new ReadResp().setConfirmation(confirmation));

  // Indexing the append-only log directly is what makes delivery gap-free and exactly-once.
  let scanned = 0;
  let caughtUp = false;
  while (!signal.aborted) {
    const event = source()[cursor];
    if (event) {
      cursor++;
      const wanted = stream !== undefined || !filter || filter.matches(event);
      if (wanted) await sendEvent(event);
      if (!stream && filter && ++scanned >= filter.checkpointEvery) {
        scanned = 0;
        await send(new ReadResp().setCheckpoint(checkpoint(event.position)));
      }
      continue;
    }
    if (!caughtUp) {
      caughtUp = true;
      await send(new ReadResp().setCaughtUp(new ReadResp.CaughtUp()));
    }
    await log.nextAppend(signal);
  }
}

function checkpoint(position: bigint): ReadRespMessage.Checkpoint {
  const value = position.toString();
  return new ReadResp.Checkpoint().setCommitPosition(value).setPreparePosition(value);
}

function streamReadStart(stream: ReadReq.Options.StreamOptions, length: number, backwards: boolean): number {
  const last = length - 1;
  switch (stream.getRevisionOptionCase()) {
    case START:
      return 0;
    case REVISION: {
      const revision = Number(BigInt(stream.getRevision()));
      return backwards ? Math.min(revision, last) : revision;
    }
    default:
      return backwards ? last : length;
  }
}

function streamSubscriptionStart(stream: ReadReq.Options.StreamOptions, length: number): number {
  switch (stream.getRevisionOptionCase()) {
    case START:
      return 0;
    case REVISION:
      return Number(BigInt(stream.getRevision())) + 1;
    default:
      return length;
  }
}

/** Forwards reads include the event at the position; backwards reads start just before it. */
function allReadStart(
  all: ReadReq.Options.AllOptions | undefined,
  events: readonly StoredEvent[],
  backwards: boolean,
): number {
  switch (all?.getAllOptionCase()) {
    case ALL_START:
      return backwards ? -1 : 0;
    case POSITION: {
      const at = firstIndexFrom(events, BigInt(all?.getPosition()?.getCommitPosition() ?? '0'));
      return backwards ? at - 1 : at;
    }
    default:
      return backwards ? events.length - 1 : events.length;
  }
}

/** Subscriptions resume strictly after the given position. */
function allSubscriptionStart(options: ReadReq.Options, events: readonly StoredEvent[]): number {
  const all = options.getAll();
  switch (all?.getAllOptionCase()) {
    case ALL_START:
      return 0;
    case POSITION:
      return firstIndexFrom(events, BigInt(all?.getPosition()?.getCommitPosition() ?? '0') + 1n);
    default:
      return events.length;
  }
}

/** Index of the first event at or after `position` (binary search; positions only grow). */
function firstIndexFrom(events: readonly StoredEvent[], position: bigint): number {
  let low = 0;
  let high = events.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((events[mid]?.position ?? 0n) < position) low = mid + 1;
    else high = mid;
  }
  return low;
}
