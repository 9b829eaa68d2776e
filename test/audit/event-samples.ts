import { z } from 'zod';
import { accountStream } from '../../events/account.ts';
import { batchStream } from '../../events/batch.ts';
import { budgetStream } from '../../events/budget.ts';
import { cacheStream } from '../../events/cache.ts';
import { CATALOG_STREAM } from '../../events/catalog.ts';
import { categoryOf, type EventCategory } from '../../events/categories.ts';
import { credentialStream } from '../../events/credential.ts';
import { evalStream } from '../../events/eval.ts';
import { fileStream } from '../../events/file.ts';
import { type EventType, eventSchemas } from '../../events/index.ts';
import { jobStream } from '../../events/job.ts';
import { reconciliationStream } from '../../events/reconciliation.ts';
import { replayStream } from '../../events/replay.ts';
import { subAccountStream } from '../../events/subaccount.ts';
import { webhookSecretStream, webhookStream } from '../../events/webhook.ts';

type Data = Record<string, unknown>;

/**
 * Where each category's events go, named from the event's own data as the gateway names its streams. A new category
 * fails the typecheck here until it says where its events go.
 */
const STREAM_OF: Record<EventCategory, (data: Data) => string> = {
  account: (d) => accountStream(d.accountId as string),
  budget: (d) => budgetStream(d.accountId as string, d.month as string),
  subaccount: (d) => subAccountStream(d.subAccountId as string),
  job: (d) => jobStream(d.jobId as string),
  file: (d) => fileStream(d.fileId as string),
  batch: (d) => batchStream(d.batchId as string),
  webhook: (d) => webhookStream(d.deliveryId as string),
  webhooksecret: (d) => webhookSecretStream(d.keyId as string),
  replay: (d) => replayStream(d.replayId as string),
  cache: (d) => cacheStream(d.accountId as string),
  catalog: () => CATALOG_STREAM,
  eval: (d) => evalStream(d.evalId as string),
  credential: (d) => credentialStream(d.provider as string),
  reconciliation: (d) => reconciliationStream(d.provider as string, d.day as string),
};

const AT = '2026-03-10T12:00:00.000Z';
/** Values tried, in order, for a string the schema constrains with a pattern (amounts, months, days, times, hashes). */
const PATTERNED = ['0', '2026-03', '2026-03-10', AT, 'a'.repeat(64), 'sample'];

export interface Sample {
  type: EventType;
  stream: string;
  data: Data;
}

/**
 * One valid event of every type in the catalogue, each in a stream of its own category, built from the type's
 * schema: the simplest value each field allows (required fields only; null where null is allowed; empty arrays),
 * every `…Id` field named after itself so that the ids a stream is named by agree with the data. A type whose schema
 * this cannot satisfy throws, naming the type, rather than being left out.
 */
export function sampleEveryEventType(): Sample[] {
  return (Object.keys(eventSchemas) as EventType[]).map((type) => {
    const schema: z.ZodType = eventSchemas[type];
    const data = sampleOf(z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }), '') as Data;
    const parsed = schema.safeParse(data);
    if (!parsed.success)
      throw new Error(`no valid sample of ${type}: ${parsed.error.message} (from ${JSON.stringify(data)})`);
    const category = categoryOf(type);
    if (!category) throw new Error(`${type} has no category in events/categories.ts`);
    return { type, stream: STREAM_OF[category](data), data };
  });
}

type JsonSchema = z.core.JSONSchema.JSONSchema;
/** A sub-schema: `true` (anything) or a schema; `items` may also be a tuple, of which the first is sampled. */
type Sub = z.core.JSONSchema._JSONSchema | z.core.JSONSchema._JSONSchema[] | undefined;
const schemaOf = (sub: Sub): JsonSchema => {
  const one = Array.isArray(sub) ? sub[0] : sub;
  return typeof one === 'object' ? one : {};
};

function sampleOf(schema: JsonSchema, key: string): unknown {
  if ('const' in schema) return schema.const;
  if (schema.enum) return schema.enum[0];
  const choices = schema.anyOf ?? schema.oneOf;
  if (choices) {
    const nullable = choices.some((s) => s.type === 'null');
    return nullable ? null : sampleOf(schemaOf(choices[0]), key);
  }
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes('null')) return null;
  switch (types[0]) {
    case 'object':
      return Object.fromEntries(
        (schema.required ?? []).map((name) => [name, sampleOf(schemaOf(schema.properties?.[name]), name)]),
      );
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => sampleOf(schemaOf(schema.items), key));
    case 'string':
      return stringFor(schema, key);
    case 'integer':
    case 'number':
      return Math.max(
        1,
        schema.minimum ?? 0,
        typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum + 1 : 0,
      );
    case 'boolean':
      return false;
    default:
      throw new Error(`'${key}': cannot sample a value of ${JSON.stringify(schema)}`);
  }
}

function stringFor(schema: JsonSchema, key: string): string {
  if (schema.pattern) {
    const pattern = new RegExp(schema.pattern);
    const fits = PATTERNED.find((candidate) => pattern.test(candidate));
    if (fits === undefined) throw new Error(`'${key}': no sample matches /${schema.pattern}/`);
    return fits;
  }
  if (key === 'at' || /(?:At|Until)$/.test(key)) return AT;
  if (key === 'month') return AT.slice(0, 7);
  if (key.endsWith('Url') || key === 'url') return 'https://example.com/hook';
  // Ids are their own names, so that every event naming an account (a delivery, an eval) names the same one.
  const value = key.endsWith('Id') ? `${key.slice(0, -2)}_every` : key || 'sample';
  return value.padEnd(schema.minLength ?? 0, 'x');
}
