/**
 * A BPE rank table packed into three typed arrays: every token's bytes one after another in rank order, where
 * each rank's bytes start, and an open-addressing hash from bytes to rank. o200k's 200,000 tokens take 4.2 MB
 * here; as the JavaScript strings and `Map` a general tokenizer library builds they held about 14.5 MB of heap
 * and 18.5 MB of the idle gateway's RSS, because a count needs only the bytes-to-rank direction.
 */
export class RankTable {
  private constructor(
    private readonly bytes: Uint8Array,
    private readonly starts: Uint32Array,
    private readonly slots: Int32Array,
  ) {}

  /** The table of a `.tiktoken` file: a base64 token and its rank a line, ranks ascending from 0. */
  static fromTiktoken(file: Buffer): RankTable {
    const text = file.toString('latin1');
    // Decoded base64 is shorter than its text, so the file's length bounds the bytes of all the tokens.
    const scratch = Buffer.allocUnsafeSlow(file.length);
    const starts: number[] = [];
    let written = 0;
    for (let from = 0; from < text.length; ) {
      const space = text.indexOf(' ', from);
      if (space === -1) break;
      let end = text.indexOf('\n', space);
      if (end === -1) end = text.length;
      const rank = Number(text.slice(space + 1, end));
      if (!Number.isInteger(rank) || rank < starts.length)
        throw new Error(`rank table: bad rank at byte ${from}`);
      // A rank the file skips is kept as an empty token, which no lookup finds.
      while (starts.length <= rank) starts.push(written);
      written += scratch.write(text.slice(from, space), written, 'base64');
      from = end + 1;
    }
    starts.push(written);
    const bytes = new Uint8Array(written);
    bytes.set(scratch.subarray(0, written));
    return new RankTable(bytes, Uint32Array.from(starts), hashed(bytes, starts));
  }

  /** How many ranks the table has. */
  get size(): number {
    return this.starts.length - 1;
  }

  /** The rank of `piece[from, to)`, or -1 when those bytes are no token. */
  rankOf(piece: Uint8Array, from: number, to: number): number {
    const mask = this.slots.length - 1;
    for (let slot = hash(piece, from, to) & mask; ; slot = (slot + 1) & mask) {
      const entry = this.slots[slot] as number;
      if (entry === 0) return -1;
      if (this.holds(entry - 1, piece, from, to)) return entry - 1;
    }
  }

  /** The bytes of a rank (a view into the table). */
  tokenBytes(rank: number): Uint8Array {
    if (!(rank >= 0 && rank < this.size)) throw new RangeError(`rank table: no rank ${rank}`);
    return this.bytes.subarray(this.starts[rank], this.starts[rank + 1]);
  }

  private holds(rank: number, piece: Uint8Array, from: number, to: number): boolean {
    const start = this.starts[rank] as number;
    if ((this.starts[rank + 1] as number) - start !== to - from) return false;
    for (let i = 0; i < to - from; i++) if (this.bytes[start + i] !== piece[from + i]) return false;
    return true;
  }
}

/** Slots for every non-empty rank, at most half full so probes stay short. */
function hashed(bytes: Uint8Array, starts: number[]): Int32Array {
  let capacity = 1;
  while (capacity < starts.length * 2) capacity *= 2;
  const slots = new Int32Array(capacity);
  const mask = capacity - 1;
  for (let rank = 0; rank < starts.length - 1; rank++) {
    const from = starts[rank] as number;
    const to = starts[rank + 1] as number;
    if (from === to) continue;
    let slot = hash(bytes, from, to) & mask;
    while (slots[slot] !== 0) slot = (slot + 1) & mask;
    slots[slot] = rank + 1;
  }
  return slots;
}

/** FNV-1a over the bytes. */
function hash(bytes: Uint8Array, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) h = Math.imul(h ^ (bytes[i] as number), 0x01000193);
  return h >>> 0;
}
