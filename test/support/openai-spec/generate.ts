/**
 * Writes schemas.json beside this file: the component schemas of OpenAI's published OpenAPI description
 * (github.com/openai/openai-openapi, its openapi.json) that describe the answers the gateway gives in OpenAI's
 * shape, with everything they reference and nothing else.
 *
 *   node --import tsx test/support/openai-spec/generate.ts <clone or git dir of openai/openai-openapi> [commit]
 *
 * The commit it read is recorded in schemas.json (`upstream.commit`); regenerate to follow OpenAI's changes, and add
 * a root below when the gateway answers another of OpenAI's shapes.
 *
 * Two changes are made to OpenAI's text, neither of which changes what a schema accepts: annotations
 * (`description`, `title`, examples, `deprecated`, `x-*`) are dropped, and OpenAPI 3.0's `nullable: true`, which
 * the description still uses in places beside 3.1's `type: "null"`, becomes `anyOf: [schema, {type: "null"}]`
 * (JSON Schema validators do not know `nullable`, and ignore it beside a `$ref`).
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The answers checked by test/http/openai-conformance.e2e.spec.ts. */
const ROOTS = [
  'CreateChatCompletionResponse',
  'CreateChatCompletionStreamResponse',
  'CreateEmbeddingResponse',
  'ListModelsResponse',
  'Model',
  'OpenAIFile',
  'ListFilesResponse',
  'DeleteFileResponse',
  'Batch',
  'ListBatchesResponse',
  'CreateModerationResponse',
  'ImagesResponse',
  'CreateTranscriptionResponseJson',
  'Response',
  'ErrorResponse',
];

/** The Responses stream events the gateway sends (src/responses/stream.ts), by their `type`. */
const EVENT_TYPES = [
  'response.created',
  'response.in_progress',
  'response.output_item.added',
  'response.output_item.done',
  'response.content_part.added',
  'response.content_part.done',
  'response.output_text.delta',
  'response.output_text.done',
  'response.reasoning_text.delta',
  'response.reasoning_text.done',
  'response.function_call_arguments.delta',
  'response.function_call_arguments.done',
  'response.completed',
  'response.incomplete',
  'response.failed',
  'error',
];

type Schema = Record<string, unknown>;

const ANNOTATIONS = new Set(['description', 'title', 'example', 'examples', 'deprecated']);
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'dependentSchemas']);
const SCHEMA_LISTS = new Set(['anyOf', 'oneOf', 'allOf', 'prefixItems']);
const SCHEMA_ONE = new Set([
  'items',
  'additionalProperties',
  'not',
  'contains',
  'propertyNames',
  'if',
  'then',
  'else',
  'unevaluatedProperties',
  'unevaluatedItems',
]);

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A schema without annotations and with `nullable` spelled as JSON Schema spells it. */
function clean(schema: unknown): unknown {
  if (!isSchema(schema)) return schema;
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (ANNOTATIONS.has(key) || key.startsWith('x-') || key === 'nullable') continue;
    if (SCHEMA_MAPS.has(key) && isSchema(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, clean(sub)]));
    } else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) {
      out[key] = value.map(clean);
    } else if (SCHEMA_ONE.has(key)) {
      out[key] = clean(value);
    } else {
      out[key] = value;
    }
  }
  return schema.nullable === true ? { anyOf: [out, { type: 'null' }] } : out;
}

function referenced(schema: unknown): string[] {
  return [...JSON.stringify(schema).matchAll(/"#\/components\/schemas\/([^"]+)"/g)].map(
    (m) => m[1] as string,
  );
}

function main(): void {
  const [source, commit = 'HEAD'] = process.argv.slice(2);
  if (!source) throw new Error('usage: generate.ts <clone or git dir of openai/openai-openapi> [commit]');
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', source, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
  const sha = git('rev-parse', commit).trim();
  const all = JSON.parse(git('show', `${sha}:openapi.json`)).components.schemas as Record<string, Schema>;

  const union = all.ResponseStreamEvent?.anyOf as { $ref: string }[];
  const streamEvents: Record<string, string> = {};
  for (const { $ref } of union) {
    const name = $ref.split('/').pop() as string;
    const type = ((all[name]?.properties as Schema)?.type as Schema)?.enum as string[];
    if (EVENT_TYPES.includes(type[0] as string)) streamEvents[type[0] as string] = name;
  }
  const missing = EVENT_TYPES.filter((type) => !streamEvents[type]);
  if (missing.length > 0) throw new Error(`no stream event schema for ${missing.join(', ')}`);

  const wanted = new Set<string>();
  const queue = [...ROOTS, ...Object.values(streamEvents)];
  while (queue.length > 0) {
    const name = queue.pop() as string;
    if (wanted.has(name)) continue;
    if (!all[name]) throw new Error(`no schema ${name}`);
    wanted.add(name);
    queue.push(...referenced(all[name]));
  }
  const schemas = Object.fromEntries([...wanted].sort().map((name) => [name, clean(all[name])]));
  const out = {
    upstream: {
      repository: 'https://github.com/openai/openai-openapi',
      commit: sha,
      file: 'openapi.json',
      generator: 'test/support/openai-spec/generate.ts',
    },
    streamEvents,
    components: { schemas },
  };
  const target = fileURLToPath(new URL('./schemas.json', import.meta.url));
  writeFileSync(target, `${JSON.stringify(out, null, 2)}\n`);
  execFileSync('npx', ['biome', 'format', '--write', target], { stdio: 'inherit' });
  process.stdout.write(`${wanted.size} schemas from ${sha}\n`);
}

main();
