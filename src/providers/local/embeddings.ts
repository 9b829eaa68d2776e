import { invalidField } from '../../contracts/errors.ts';
import type { EmbeddingsAdapter } from '../../contracts/modality.ts';
import { countTextsWithin } from '../../tokens/count.ts';

/** The vector's length when the request names no `dimensions`, as OpenAI's text-embedding-3-small. */
export const LOCAL_EMBEDDING_DIMENSIONS = 1536;

/** The longest vector served (text-embedding-3-large's). */
const MAX_DIMENSIONS = 3072;

/**
 * OpenAI's limits on an embeddings request, which `local/embed` keeps as a provider would: tokens per input (every
 * embedding model's), and tokens summed over the inputs of one request. Beyond them the request is refused before
 * the rest is counted, so a large body costs little.
 */
const MAX_INPUT_TOKENS = 8_192;
const MAX_REQUEST_TOKENS = 300_000;

/** Character n-grams of these lengths, over the lower-cased text padded with a space on each side. */
const GRAMS = [3, 4, 5];

/** 32-bit FNV-1a over UTF-16 code units: fast, and the same on every machine. */
function fnv1a(text: string, from: number, to: number): number {
  let hash = 0x811c9dc5;
  for (let i = from; i < to; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/**
 * A deterministic, lexical embedding (the hashing trick over character 3-, 4- and 5-grams): each n-gram adds ±1
 * at the position its FNV-1a hash picks (the sign from the hash's top bit), and the vector is scaled to unit
 * length. Texts that share spelling are close;
 * texts that mean the same in other words are not. It is for trying the API with no key, not for semantic search.
 */
export function hashedEmbedding(text: string, dimensions: number): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  const padded = ` ${text.toLowerCase().replace(/\s+/g, ' ').trim()} `;
  for (const n of GRAMS) {
    for (let i = 0; i + n <= padded.length; i++) {
      const hash = fnv1a(padded, i, i + n);
      const slot = hash % dimensions;
      vector[slot] = (vector[slot] ?? 0) + (hash & 0x80000000 ? 1 : -1);
    }
  }
  const norm = Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
  return norm === 0 ? vector : vector.map((value) => value / norm);
}

/** The built-in `local/embed`: no key, no network, billed on the tokens the gateway counts. */
export const localEmbeddings: EmbeddingsAdapter = {
  async embed({ inputs, dimensions }) {
    const size = dimensions ?? LOCAL_EMBEDDING_DIMENSIONS;
    if (size > MAX_DIMENSIONS) throw invalidField('dimensions', `at most ${MAX_DIMENSIONS} for local/embed`);
    // Counted exactly (what is billed must not exceed the hold's count), and refused past a limit before the rest.
    const tokens = await countTextsWithin(inputs, MAX_INPUT_TOKENS, MAX_REQUEST_TOKENS);
    if (!tokens) {
      throw invalidField(
        'input',
        `local/embed takes at most ${MAX_INPUT_TOKENS} tokens per input and ${MAX_REQUEST_TOKENS} in all`,
      );
    }
    const vectors: number[][] = [];
    for (const input of inputs) {
      vectors.push(hashedEmbedding(input, size));
      // Hashing a long input takes a while; the loop is given back between inputs.
      await new Promise((resolve) => setImmediate(resolve));
    }
    return { vectors, inputTokens: tokens.reduce((sum, count) => sum + count, 0) };
  },
};
