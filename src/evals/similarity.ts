/** Text similarities of OpenAI's `text_similarity` grader, each 0..1 (1: the same text). */

const tokens = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** Longest common subsequence length, two rows at a time. */
function lcs<T>(a: readonly T[], b: readonly T[]): number {
  let previous = new Array<number>(b.length + 1).fill(0);
  for (const x of a) {
    const row = new Array<number>(b.length + 1).fill(0);
    for (let j = 0; j < b.length; j++) {
      row[j + 1] =
        x === b[j] ? (previous[j] as number) + 1 : Math.max(previous[j + 1] as number, row[j] as number);
    }
    previous = row;
  }
  return previous[b.length] as number;
}

/** Characters compared at most, so that one long answer cannot stall the worker (the LCS is quadratic). */
const MAX_CHARS = 4_000;

/** The normalised Indel similarity (rapidfuzz's `ratio`, which OpenAI's fuzzy_match uses): 2·LCS / (|a| + |b|). */
export function fuzzyMatch(a: string, b: string): number {
  const x = [...a.slice(0, MAX_CHARS)];
  const y = [...b.slice(0, MAX_CHARS)];
  if (x.length + y.length === 0) return 1;
  return (2 * lcs(x, y)) / (x.length + y.length);
}

function ngrams(words: readonly string[], n: number): Map<string, number> {
  const counts = new Map<string, number>();
  for (let i = 0; i + n <= words.length; i++) {
    const gram = words.slice(i, i + n).join(' ');
    counts.set(gram, (counts.get(gram) ?? 0) + 1);
  }
  return counts;
}

function overlapCount(a: Map<string, number>, b: Map<string, number>): number {
  let shared = 0;
  for (const [gram, count] of a) shared += Math.min(count, b.get(gram) ?? 0);
  return shared;
}

const f1 = (shared: number, candidate: number, reference: number) =>
  shared === 0 ? 0 : (2 * shared) / (candidate + reference);

/** ROUGE-N as an F1 of shared word n-grams. */
export function rougeN(candidate: string, reference: string, n: number): number {
  const c = ngrams(tokens(candidate), n);
  const r = ngrams(tokens(reference), n);
  const total = (m: Map<string, number>) => [...m.values()].reduce((s, v) => s + v, 0);
  if (total(c) === 0 && total(r) === 0) return 1;
  return f1(overlapCount(c, r), total(c), total(r));
}

/** ROUGE-L as an F1 of the longest common word subsequence. */
export function rougeL(candidate: string, reference: string): number {
  const c = tokens(candidate).slice(0, 2_000);
  const r = tokens(reference).slice(0, 2_000);
  if (c.length === 0 && r.length === 0) return 1;
  return f1(lcs(c, r), c.length, r.length);
}

/** Sentence BLEU (up to 4-grams, add-one smoothing above unigrams, brevity penalty). */
export function bleu(candidate: string, reference: string): number {
  const c = tokens(candidate);
  const r = tokens(reference);
  if (c.length === 0) return r.length === 0 ? 1 : 0;
  let logSum = 0;
  const orders = Math.min(4, c.length);
  for (let n = 1; n <= orders; n++) {
    const cg = ngrams(c, n);
    const total = c.length - n + 1;
    const shared = overlapCount(cg, ngrams(r, n));
    const precision = n === 1 ? shared / total : (shared + 1) / (total + 1);
    if (precision === 0) return 0;
    logSum += Math.log(precision) / orders;
  }
  const brevity = c.length >= r.length ? 1 : Math.exp(1 - r.length / c.length);
  return brevity * Math.exp(logSum);
}

export function similarity(
  metric: 'fuzzy_match' | 'bleu' | 'rouge_1' | 'rouge_2' | 'rouge_l',
  a: string,
  b: string,
) {
  switch (metric) {
    case 'fuzzy_match':
      return fuzzyMatch(a, b);
    case 'bleu':
      return bleu(a, b);
    case 'rouge_1':
      return rougeN(a, b, 1);
    case 'rouge_2':
      return rougeN(a, b, 2);
    case 'rouge_l':
      return rougeL(a, b);
  }
}
