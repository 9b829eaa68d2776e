import { chainHash, GENESIS_HASH, type StoredEvent } from '../../events/envelope.ts';
import { Findings, where } from './findings.ts';

interface StreamTrack<Item> {
  /** The revision expected next. */
  next: number;
  lastHash: string;
  /** Events that arrived before a lower revision of their stream, held until it comes. */
  early: Map<number, Item>;
}

export interface StreamHead {
  revision: number;
  hash: string;
}

/**
 * Checks each stream's revisions and hash chain as the log is read once in global order, and hands events on
 * in revision order per stream. It does what `verifyChain` does for a whole stream, event by event, so that no
 * stream has to be held in memory; it also separates the two ways a chain breaks: an edited event fails its
 * own content hash, a deleted one breaks the link from the next event to its predecessor.
 *
 * The global order may, rarely, put a stream's revision n + 1 before n (two transactions take their ids in one
 * order and the stream's lock in the other), so an early revision waits for the one before it; only a
 * revision still missing when the log ends is a gap.
 */
export class StreamSequencer<Item extends { stored: StoredEvent }> {
  readonly revisions = new Findings();
  readonly chains = new Findings();
  private readonly streams = new Map<string, StreamTrack<Item>>();
  private readonly ids = new Set<string>();
  private readonly brokenChains = new Set<string>();
  events = 0;

  constructor(private readonly release: (item: Item) => void) {}

  accept(item: Item): void {
    const { stored } = item;
    this.events += 1;
    if (this.ids.has(stored.id))
      this.revisions.fail(`${where(stored)}: event id ${stored.id} is stored twice`);
    else this.ids.add(stored.id);
    let track = this.streams.get(stored.stream);
    if (!track) {
      track = { next: 0, lastHash: GENESIS_HASH, early: new Map() };
      this.streams.set(stored.stream, track);
    }
    if (stored.revision < track.next || track.early.has(stored.revision)) {
      this.revisions.fail(`${where(stored)}: revision ${stored.revision} is stored twice`);
      return;
    }
    if (stored.revision > track.next) {
      track.early.set(stored.revision, item);
      return;
    }
    this.take(track, item);
    this.drain(track);
  }

  /** At the end of the log: revisions that never came are gaps; what follows them is handed on anyway. */
  finish(): void {
    for (const [stream, track] of this.streams) {
      while (track.early.size > 0) {
        const first = Math.min(...track.early.keys());
        const missing = first - 1 === track.next ? `${track.next}` : `${track.next}–${first - 1}`;
        this.revisions.fail(`${stream}: revision ${missing} missing (the stream goes on at ${first})`);
        track.next = first;
        this.drain(track);
      }
    }
  }

  /** The last revision and hash seen of each stream. */
  heads(): Map<string, StreamHead> {
    return new Map(
      [...this.streams].map(([stream, t]) => [stream, { revision: t.next - 1, hash: t.lastHash }]),
    );
  }

  get streamCount(): number {
    return this.streams.size;
  }

  get brokenStreamCount(): number {
    return this.brokenChains.size;
  }

  private drain(track: StreamTrack<Item>): void {
    for (let item = track.early.get(track.next); item; item = track.early.get(track.next)) {
      track.early.delete(track.next);
      this.take(track, item);
    }
  }

  private take(track: StreamTrack<Item>, item: Item): void {
    const { stored } = item;
    if (stored.prevHash !== track.lastHash) {
      const predecessor =
        stored.revision === 0 ? 'the genesis hash' : `the hash of revision ${stored.revision - 1}`;
      this.breakChain(
        stored,
        `previous hash does not match ${predecessor} (an event before it was removed or altered)`,
      );
    }
    if (chainHash(stored.prevHash, stored) !== stored.hash) {
      this.breakChain(stored, `content hash mismatch: this ${stored.type} was changed after it was written`);
    }
    track.next = stored.revision + 1;
    track.lastHash = stored.hash;
    this.release(item);
  }

  private breakChain(stored: StoredEvent, reason: string): void {
    this.brokenChains.add(stored.stream);
    this.chains.fail(`${where(stored)}: ${reason}`);
  }
}
