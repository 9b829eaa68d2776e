import { randomUUID } from 'node:crypto';
import { type EventContext, parseAs, toNewEvent } from '../../events/index.ts';
import { type JobEvent, jobStream } from '../../events/job.ts';
import type { EventStore } from '../../events/store.ts';
import { type Decision, StreamWriter } from '../stream-writer.ts';
import { decide, evolve, initialState, type JobCommand, type JobState } from './decide.ts';

interface Contextual {
  command: JobCommand;
  context: EventContext;
}

export class JobCommands {
  private readonly writer: StreamWriter<JobState, Contextual, JobEvent>;

  constructor(store: EventStore) {
    this.writer = new StreamWriter(store, {
      initialState,
      evolve,
      decide: ({ command }, state) => decide(command, state),
      parse: (stored) => parseAs<JobEvent>(stored),
      serialize: (event, { context }) => toNewEvent(event, randomUUID(), context),
    });
  }

  handle(jobId: string, command: JobCommand, context: EventContext): Promise<Decision<JobState, JobEvent>> {
    return this.writer.submit(jobStream(jobId), { command, context });
  }
}
