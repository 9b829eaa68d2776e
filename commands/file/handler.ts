import { type FileEvent, fileStream } from '../../events/file.ts';
import { deterministicEventId, type EventContext, parseAs, toNewEvent } from '../../events/index.ts';
import type { EventStore } from '../../events/store.ts';
import { type Decision, StreamWriter } from '../stream-writer.ts';
import { decide, evolve, type FileCommand, type FileState, initialState } from './decide.ts';

interface Contextual {
  command: FileCommand;
  context: EventContext;
}

export class FileCommands {
  private readonly writer: StreamWriter<FileState, Contextual, FileEvent>;

  constructor(store: EventStore) {
    this.writer = new StreamWriter(store, {
      initialState,
      evolve,
      decide: ({ command }, state) => decide(command, state),
      parse: (stored) => parseAs<FileEvent>(stored),
      // Each event happens once per file, so a retried append of either is recognised by its id.
      serialize: (event, { context }, stream) =>
        toNewEvent(event, deterministicEventId(`${stream}/${event.type}`), context),
    });
  }

  handle(
    fileId: string,
    command: FileCommand,
    context: EventContext,
  ): Promise<Decision<FileState, FileEvent>> {
    return this.writer.submit(fileStream(fileId), { command, context });
  }
}
