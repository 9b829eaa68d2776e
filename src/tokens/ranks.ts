import { closeSync, openSync, readSync } from 'node:fs';

/**
 * A BPE rank table packed into three typed arrays: every token's bytes one after another in rank order, where
 * each rank's bytes start, and an open-addressing hash from bytes to rank. o200k's 200,000 tokens take about 4 MB
 * here; as the JavaScript strings and `Map` a general tokenizer library builds they held about 14.5 MB of heap
 * and 18.5 MB of the idle gateway's RSS, because a count needs only the bytes-to-rank direction.
 */
export class RankTable {
  private constructor(
    private readonly bytes: Uint8Array,
    private readonly starts: Uint32Array,
    private readonly slots: Int32Array,
  ) {}

  /**
   * The table of a `.tiktoken` file (a base64 token and its rank a line, ranks ascending from 0), read twice in
   * small blocks: once to size the arrays, once to fill them. A buffer of the whole file, freed after, would leave
   * glibc keeping several MB of freed C heap for the life of the process (it raises its thresholds for handing
   * memory back to the largest block freed).
   */
  static fromTiktoken(path: string): RankTable {
    let ranks = 0;
    let total = 0;
    for (const { token, rank } of entries(path)) {
      if (rank < ranks) throw new Error(`rank table: rank ${rank} out of order in ${path}`);
      ranks = rank + 1;
      total += Buffer.byteLength(token, 'base64');
    }
    const bytes = Buffer.alloc(total);
    // A rank the file skips is kept as an empty token, which no lookup finds.
    const starts = new Uint32Array(ranks + 1);
    let next = 0;
    let written = 0;
    for (const { token, rank } of entries(path)) {
      while (next <= rank) starts[next++] = written;
      written += bytes.write(token, written, 'base64');
    }
    starts[ranks] = written;
    return new RankTable(bytes, starts, hashed(bytes, starts));
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
function hashed(bytes: Uint8Array, starts: Uint32Array): Int32Array {
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

const BLOCK = 64 * 1024;

/** The lines of a `.tiktoken` file as base64 token and rank. */
function* entries(path: string): Generator<{ token: string; rank: number }> {
  const fd = openSync(path, 'r');
  const block = Buffer.allocUnsafeSlow(BLOCK);
  let carry = '';
  try {
    for (let read = readSync(fd, block); read > 0; read = readSync(fd, block)) {
      const text = carry + block.toString('latin1', 0, read);
      let from = 0;
      for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', from)) {
        if (end > from) yield entry(text.slice(from, end), path);
        from = end + 1;
      }
      carry = text.slice(from);
    }
    if (carry.trim() !== '') yield entry(carry, path);
  } finally {
    closeSync(fd);
  }
}

function entry(line: string, path: string): { token: string; rank: number } {
  const space = line.indexOf(' ');
  const rank = Number(line.slice(space + 1));
  if (space <= 0 || !Number.isInteger(rank) || rank < 0) throw new Error(`rank table: bad line in ${path}`);
  return { token: line.slice(0, space), rank };
}
