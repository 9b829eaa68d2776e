import { type BatchEvent, batchStream } from '../../events/batch.ts';
import { deterministicEventId, type EventContext, parseAs, toNewEvent } from '../../events/index.ts';
import type { EventStore } from '../../events/store.ts';
import { type Decision, StreamWriter } from '../stream-writer.ts';
import { type BatchCommand, type BatchState, decide, evolve, initialState } from './decide.ts';

interface Contextual {
  command: BatchCommand;
  context: EventContext;
}

/** Each event is decided once per batch (per line, per take), so a retried append is recognised by its id. */
function eventName(stream: string, event: BatchEvent): string {
  switch (event.type) {
    case 'BatchLineFinished':
      return `${stream}/line/${event.data.line}`;
    case 'BatchStarted':
      return `${stream}/take/${event.data.take}`;
    case 'BatchUpstreamPrepared':
    case 'BatchUpstreamSubmitted':
    case 'BatchUpstreamEnded':
      return `${stream}/upstream/${event.data.group}/${event.type}`;
    default:
      return `${stream}/${event.type}`;
  }
}

export class BatchCommands {
  private readonly writer: StreamWriter<BatchState, Contextual, BatchEvent>;

  constructor(store: EventStore) {
    this.writer = new StreamWriter(store, {
      initialState,
      evolve,
      decide: ({ command }, state) => decide(command, state),
      parse: (stored) => parseAs<BatchEvent>(stored),
      serialize: (event, { context }, stream) =>
        toNewEvent(event, deterministicEventId(eventName(stream, event)), context),
    });
  }

  handle(
    batchId: string,
    command: BatchCommand,
    context: EventContext,
  ): Promise<Decision<BatchState, BatchEvent>> {
    return this.writer.submit(batchStream(batchId), { command, context });
  }
}
