import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { storableText, unstorableCharacter } from '../../events/storable.ts';
import { ChatCompletionRequest } from '../chat/request.ts';
import { describeBadInput } from '../contracts/input-check.ts';
import { BODY_SHAPE_LIMITS, describeOversizedShape } from '../contracts/json-shape.ts';
import { EmbeddingsRequest } from '../modalities/embeddings/request.ts';

/** OpenAI's limit on requests per batch. */
export const MAX_BATCH_LINES = 50_000;
/** Longest reason kept for an invalid line. */
const MAX_REASON = 500;

/** What a batch runs: chat completions or embeddings, at the batch price. */
export type BatchEndpoint = '/v1/chat/completions' | '/v1/embeddings';

/** An endpoint as a batch or one of its lines names it, with or without the `/v1` prefix; undefined for others. */
export function batchEndpoint(url: string): BatchEndpoint;
export function batchEndpoint(url: unknown): BatchEndpoint | undefined;
export function batchEndpoint(url: unknown): BatchEndpoint | undefined {
  if (url === '/v1/chat/completions' || url === '/chat/completions') return '/v1/chat/completions';
  if (url === '/v1/embeddings' || url === '/embeddings') return '/v1/embeddings';
  return undefined;
}

export type InputLine =
  | { valid: true; line: number; customId: string; body: ChatCompletionRequest | EmbeddingsRequest }
  | { valid: false; line: number; customId: string | null; message: string };

/** The input file's non-blank lines with their 1-based line numbers, read as a stream. */
export async function* inputLines(input: Readable): AsyncGenerator<{ line: number; text: string }> {
  const reader = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  let line = 0;
  try {
    for await (const text of reader) {
      line += 1;
      if (text.trim() !== '') yield { line, text };
    }
  } finally {
    reader.close();
    input.destroy();
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * One line of OpenAI's batch input format, `{custom_id, method: "POST", url, body}`. `seen` holds the custom ids
 * of the lines before it: a repeated id makes the later line invalid (the first one stays valid). Validation and
 * every later pass over the file use this same function, so they agree on which lines are valid.
 */
export function parseInputLine(line: number, text: string, endpoint: string, seen: Set<string>): InputLine {
  // Bounded as the edge bounds a body, before the parse (an over-wide line would hold every tenant's requests), so
  // its custom id is not known: the line is named by its number.
  const oversized = describeOversizedShape(Buffer.from(text), BODY_SHAPE_LIMITS, 'line');
  if (oversized) return { valid: false, line, customId: null, message: `line ${line}: ${oversized}` };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { valid: false, line, customId: null, message: `line ${line} is not valid JSON` };
  }
  if (!isObject(value))
    return { valid: false, line, customId: null, message: `line ${line} is not a JSON object` };
  const given = typeof value.custom_id === 'string' && value.custom_id !== '' ? value.custom_id : null;
  // A custom id the store cannot keep is not echoed back: the line is reported by its number alone.
  const unstorable = given === null ? undefined : unstorableCharacter(given);
  const customId = unstorable === undefined ? given : null;
  const invalid = (message: string) => ({
    valid: false as const,
    line,
    customId,
    // Reasons may quote the line's own text (zod does), which is kept as a fact, not refused.
    message: storableText(message.slice(0, MAX_REASON)),
  });
  if (unstorable !== undefined) return invalid(`'custom_id': holds ${unstorable}, which cannot be stored`);
  if (customId === null) return invalid("'custom_id': required, a non-empty string");
  if (seen.has(customId))
    return invalid(`'custom_id': '${customId}' is used by an earlier line; custom ids must be unique`);
  seen.add(customId);
  // Held to what the API's edge accepts of the same body: storable text, no prototype keys, bounded nesting.
  const bad = describeBadInput(value, 'line');
  if (bad) return invalid(bad);
  if (value.method !== 'POST') return invalid("'method': must be POST");
  if (batchEndpoint(value.url) !== batchEndpoint(endpoint))
    return invalid(`'url': must be ${endpoint}, the batch's endpoint`);
  if (!isObject(value.body)) return invalid("'body': required, the request's JSON body");
  const schema = batchEndpoint(endpoint) === '/v1/embeddings' ? EmbeddingsRequest : ChatCompletionRequest;
  const body = schema.safeParse(value.body);
  if (!body.success) {
    const issue = body.error.issues[0];
    const path = ['body', ...(issue?.path ?? []).map(String)].join('.');
    return invalid(`'${path}': ${issue?.message ?? 'invalid'}`);
  }
  if ((body.data as { stream?: unknown }).stream === true)
    return invalid("'body.stream': a batch request cannot stream");
  return { valid: true, line, customId, body: body.data };
}

export interface ValidationProblem {
  code: string;
  message: string;
  line: number | null;
  param: string | null;
}

export type Validation =
  | { ok: true; total: number; invalid: { line: number; customId: string | null; message: string }[] }
  | { ok: false; errors: ValidationProblem[] };

/** How many of the invalid lines' problems are listed when no line at all is valid. */
const LISTED_PROBLEMS = 20;

/** Reads the whole input file once: every line valid or not, or a reason the batch cannot run at all. */
export async function validateInput(open: () => Readable, endpoint: string): Promise<Validation> {
  const seen = new Set<string>();
  const invalid: { line: number; customId: string | null; message: string }[] = [];
  let total = 0;
  try {
    for await (const { line, text } of inputLines(open())) {
      total += 1;
      if (total > MAX_BATCH_LINES) {
        return {
          ok: false,
          errors: [
            problem('too_many_requests', `the input file has more than ${MAX_BATCH_LINES} requests`, null),
          ],
        };
      }
      const parsed = parseInputLine(line, text, endpoint, seen);
      if (!parsed.valid)
        invalid.push({ line: parsed.line, customId: parsed.customId, message: parsed.message });
    }
  } catch (error) {
    return {
      ok: false,
      errors: [
        problem(
          'file_unreadable',
          storableText(`the input file could not be read: ${(error as Error).message}`),
          null,
        ),
      ],
    };
  }
  if (total === 0)
    return { ok: false, errors: [problem('empty_file', 'the input file has no requests', null)] };
  if (invalid.length === total) {
    const listed = invalid
      .slice(0, LISTED_PROBLEMS)
      .map((i) => problem('invalid_request', i.message, i.line));
    const summary = problem(
      'invalid_file',
      `no line of the input file is a valid request in the batch input format (JSONL of {custom_id, method, url, body}): ${total} invalid`,
      null,
    );
    return { ok: false, errors: [summary, ...listed] };
  }
  return { ok: true, total, invalid };
}

const problem = (code: string, message: string, line: number | null): ValidationProblem => ({
  code,
  message,
  line,
  param: line === null ? 'input_file_id' : null,
});
