import type { ReadReq } from '@eventstore/db-client/generated/streams_pb.js';
import type { StoredEvent } from './store.ts';

export interface EventFilter {
  matches(event: StoredEvent): boolean;
  /** Events scanned (matching or not) between two checkpoint messages. */
  checkpointEvery: number;
}

// ESDB's search window when the client asks for the default (`count`) window.
const DEFAULT_WINDOW = 32;

export function parseFilter(options: ReadReq.Options): EventFilter | undefined {
  const filter = options.getFilter();
  if (!filter) return undefined;
  const byStream = filter.hasStreamIdentifier();
  const expression = byStream ? filter.getStreamIdentifier() : filter.getEventType();
  const prefixes = expression?.getPrefixList() ?? [];
  const source = expression?.getRegex() ?? '';
  const regex = source ? new RegExp(source) : undefined;
  const window = filter.hasMax() ? filter.getMax() : DEFAULT_WINDOW;
  return {
    checkpointEvery: window * Math.max(1, filter.getCheckpointintervalmultiplier()),
    matches(event) {
      const target = byStream ? event.streamId : event.type;
      if (prefixes.length > 0) return prefixes.some((prefix) => target.startsWith(prefix));
      return regex ? regex.test(target) : true;
    },
  };
}
