/**
 * The response cache's cost and gain, for `npm run bench`: in process, a semantic lookup in one tenant's index of
 * 100,000 entries; over HTTP, the same gateway answering with the cache bypassed (`skip`), missing (a new prompt each
 * time: lookup, the upstream call, the store) and hitting (one prompt again and again: lookup and the ledger's charge).
 */
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { ScopeIndex, signatureOf, unit } from '../src/cache/vector-index.ts';
import { type Endpoint, type Ledger, type Percentiles, percentiles } from './load.ts';

export interface IndexMicro {
  entries: number;
  /**
   * Per dimension count: milliseconds per lookup (median of runs) that finds nothing and that finds a near copy of
   * a stored entry, the vectors' bytes, and how long loading them into the index took (signatures stored).
   */
  lookups: { dimensions: number; ms: number; hitMs: number; megabytes: number; loadMs: number }[];
}

export interface CacheKindResult {
  connections: number;
  rps: number;
  latencyMs: Percentiles | undefined;
  errors: number;
}

export interface CacheStep {
  seconds: number;
  skip: CacheKindResult[];
  miss: CacheKindResult[];
  hit: CacheKindResult[];
}

/** A deterministic pseudo-random unit vector (xorshift), so every run measures the same index. */
function randomUnit(dimensions: number, seed: number): Float32Array {
  let x = seed * 2654435761 || 1;
  const values = new Float32Array(dimensions);
  for (let i = 0; i < dimensions; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    values[i] = (x >>> 0) / 4294967296 - 0.5;
  }
  return unit(values);
}

export function indexMicro(entries = 100_000, dimensionCounts = [256, 1536]): IndexMicro {
  const lookups = dimensionCounts.map((dimensions) => {
    const index = new ScopeIndex();
    const expiresAtMs = Date.now() + 3_600_000;
    const batch = [];
    for (let i = 0; i < entries; i++) {
      const vector = randomUnit(dimensions, i + 1);
      batch.push({ seq: i + 1, group: 'g', key: `k${i}`, vector, signs: signatureOf(vector), expiresAtMs });
    }
    const loading = performance.now();
    index.add(batch);
    const loadMs = performance.now() - loading;
    const timed = (query: Float32Array, expect: number) => {
      const times: number[] = [];
      for (let run = 0; run < 7; run++) {
        const started = performance.now();
        const found = index.search('g', query, 0.95);
        times.push(performance.now() - started);
        if (found.length !== expect)
          throw new Error(`the index found ${found.length} entries, not ${expect}`);
      }
      return Math.round(([...times].sort((a, b) => a - b)[3] as number) * 100) / 100;
    };
    // A stored entry moved by a little noise (similarity about 0.99): the lookup must find it.
    const stored = batch[entries >> 1]?.vector as Float32Array;
    const noise = randomUnit(dimensions, entries + 11);
    const near = unit(stored.map((v, i) => v + 0.1 * (noise[i] as number)));
    return {
      dimensions,
      ms: timed(randomUnit(dimensions, entries + 7), 0),
      hitMs: timed(near, 1),
      megabytes: Math.round((entries * dimensions * 4) / 1e6),
      loadMs: Math.round(loadMs),
    };
  });
  return { entries, lookups };
}

async function kind(
  endpoint: Endpoint,
  ledger: Ledger,
  connections: number,
  seconds: number,
  body: (i: number) => string,
): Promise<CacheKindResult> {
  const agent = new Agent({ connections });
  const times: number[] = [];
  let errors = 0;
  let next = 0;
  const until = performance.now() + seconds * 1000;
  const worker = async () => {
    while (performance.now() < until) {
      const id = ledger.nextId();
      const started = performance.now();
      const response = await request(`${endpoint.origin}${endpoint.path}`, {
        method: 'POST',
        dispatcher: agent,
        headers: {
          ...endpoint.headers,
          ...endpoint.rotate?.[0],
          'content-type': 'application/json',
          'x-request-id': id,
        },
        body: body(next++),
      });
      await response.body.text();
      ledger.record(id, response.statusCode);
      if (response.statusCode === 200) times.push(performance.now() - started);
      else errors++;
    }
  };
  const started = performance.now();
  try {
    await Promise.all(Array.from({ length: connections }, worker));
  } finally {
    await agent.close();
  }
  return {
    connections,
    rps: times.length / ((performance.now() - started) / 1000),
    latencyMs: percentiles(times),
    errors,
  };
}

export async function cacheStep(
  endpoint: Endpoint,
  ledger: Ledger,
  seconds: number,
  connections: number[] = [1, 16],
): Promise<CacheStep> {
  const run = Date.now().toString(36);
  const body = (content: string, cache: string) =>
    JSON.stringify({
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content }],
      max_tokens: 16,
      cache,
    });
  // `force`: without a temperature `auto` neither looks up nor stores (the provider samples).
  const hitBody = body(`cached ${run}`, 'force');
  // The entry the hits read: stored by one request first.
  await kind(endpoint, ledger, 1, 0.05, () => hitBody);
  const result: CacheStep = { seconds, skip: [], miss: [], hit: [] };
  for (const n of connections) {
    result.skip.push(await kind(endpoint, ledger, n, seconds, () => body('hello', 'skip')));
    result.miss.push(await kind(endpoint, ledger, n, seconds, (i) => body(`new ${run} ${n} ${i}`, 'force')));
    result.hit.push(await kind(endpoint, ledger, n, seconds, () => hitBody));
  }
  return result;
}
