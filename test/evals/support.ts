import { eventually, type TestGateway } from '../support/gateway.ts';
import { type Json, json } from '../support/json.ts';
import type { Upstream } from '../upstreams/types.ts';

export const EXPENSIVE = 'openai/gpt-4o';
export const CHEAP = 'openai/gpt-4o-mini';
export const CHEAPEST = 'openai/gpt-4.1-nano';
export const JUDGE = 'openai/gpt-4.1';
export const SLOW = 'openai/gpt-4.1-mini';

/** The item's number from its question, `Q7 easy: what is 7 plus 7?`. */
const numberOf = (text: string) => Number(/Q(\d+)/.exec(text)?.[1] ?? -1);

/** One question a dataset item asks; `hard` ones the cheap model gets wrong. */
export const question = (i: number, hard = false) =>
  `Q${i} ${hard ? 'hard' : 'easy'}: what is ${i} plus ${i}?`;
export const answerOf = (i: number) => String(2 * i);

/**
 * The simulator's models for these tests: the expensive one answers exactly and at once, the cheap one right in a
 * sentence (a `contains` pass) but 120 ms late and wrong on hard questions, the cheapest one wrong (the judge
 * gives it ¼), and the judge grades a wrong answer ¼ and anything else 1.
 */
export function behave(openai: Upstream): void {
  openai.behave?.('gpt-4o', { reply: (text) => answerOf(numberOf(text)) });
  openai.behave?.('gpt-4o-mini', {
    delayMs: 120,
    reply: (text) => (/\bhard\b/.test(text) ? 'dunno' : `The answer is ${answerOf(numberOf(text))}.`),
  });
  openai.behave?.('gpt-4.1-nano', { reply: () => 'no idea' });
  openai.behave?.('gpt-4.1-mini', { delayMs: 400, reply: (text) => answerOf(numberOf(text)) });
  openai.behave?.('gpt-4.1', {
    reply: (prompt) => (/Answer to grade:\n(no idea|dunno)/.test(prompt) ? '0.25' : '1'),
  });
}

export const dataset = (n: number, hard: (i: number) => boolean = () => false) =>
  Array.from({ length: n }, (_, i) => ({ input: question(i, hard(i)), expected: answerOf(i) }));

export function api(gateway: TestGateway) {
  return async (
    key: string,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) => {
    const response = await fetch(`${gateway.url}/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, headers: response.headers, body: await json(response) };
  };
}

/** The eval once its run has ended (completed, failed or cancelled). */
export async function ended(gateway: TestGateway, key: string, id: string, ms = 30_000): Promise<Json> {
  const call = api(gateway);
  return eventually(
    async () => (await call(key, 'GET', `/evals/${id}`)).body,
    (e) => ['completed', 'failed', 'cancelled'].includes(e.status),
    ms,
  );
}

/** What each request id starting with `prefix` was charged, in nanos, once at least `atLeast` are projected. */
export async function chargesByPrefix(
  gateway: TestGateway,
  prefix: string,
  atLeast = 1,
): Promise<Map<string, bigint>> {
  return eventually(
    () => chargesNow(gateway, prefix),
    (found) => found.size >= atLeast,
    5000,
  );
}

/** The cents charged under `prefix`, once the charges read model shows `expected` (or after 5 s, whatever it shows). */
export async function chargedCents(gateway: TestGateway, prefix: string, expected: number): Promise<number> {
  const found = await eventually(
    () => chargesNow(gateway, prefix),
    (charges) => Math.abs(cents(sum(charges.values())) - expected) < 1e-9,
    5000,
  );
  return cents(sum(found.values()));
}

async function chargesNow(gateway: TestGateway, prefix: string): Promise<Map<string, bigint>> {
  const { rows } = await gateway.runtime.database.pool.query<{ request_id: string; total: string }>(
    `SELECT request_id, sum(charged_nanos)::text AS total FROM charges WHERE starts_with(request_id, $1)
     GROUP BY request_id`,
    [prefix],
  );
  return new Map(rows.map((r) => [r.request_id, BigInt(r.total)]));
}

export const sum = (values: Iterable<bigint>) => [...values].reduce((a, b) => a + b, 0n);
export const cents = (nanos: bigint) => Number(nanos) / 1e7;
