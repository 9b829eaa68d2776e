import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

type Schema = Record<string, unknown>;

interface Vendored {
  upstream: { repository: string; commit: string };
  /** A Responses stream event's `type` → the name of its schema. */
  streamEvents: Record<string, string>;
  components: { schemas: Record<string, Schema> };
}

/** OpenAI's schemas for its answers, trimmed from its published OpenAPI description by generate.ts. */
const vendored: Vendored = JSON.parse(readFileSync(new URL('./schemas.json', import.meta.url), 'utf8'));

export type OpenAiSchema =
  | 'CreateChatCompletionResponse'
  | 'CreateChatCompletionStreamResponse'
  | 'CreateEmbeddingResponse'
  | 'ListModelsResponse'
  | 'Model'
  | 'OpenAIFile'
  | 'ListFilesResponse'
  | 'DeleteFileResponse'
  | 'Batch'
  | 'ListBatchesResponse'
  | 'CreateModerationResponse'
  | 'ImagesResponse'
  | 'CreateTranscriptionResponseJson'
  | 'Response'
  | 'ErrorResponse';

/**
 * Fields OpenAI's schemas type without null although OpenAI answers null there when there is nothing to say: its
 * examples in the same description do (a Batch's `errors`, `output_file_id` and timestamps; a Response's `user`, and
 * its `usage` in `response.created`). A File's `status_details` was documented "string or null", and `expires_at` is
 * null for a file that never expires (the Python SDK types both Optional). The gateway answers null likewise.
 */
const NULL_AS_OPENAI_ANSWERS: Record<string, string[]> = {
  OpenAIFile: ['expires_at', 'status_details'],
  Batch: [
    'errors',
    'output_file_id',
    'error_file_id',
    'in_progress_at',
    'finalizing_at',
    'completed_at',
    'failed_at',
    'expired_at',
    'cancelling_at',
    'cancelled_at',
  ],
  ModelResponseProperties: ['user'],
  Response: ['usage'],
};

/**
 * Where the gateway answers otherwise than OpenAI's schemas on purpose, applied to a copy of the vendored schemas so
 * that everything else is checked as OpenAI wrote it. Nothing else is relaxed: a change that adds to this list is a
 * decision to write down in docs/api.md.
 */
function withDeviations(schemas: Record<string, Schema>): Record<string, Schema> {
  const copy: Record<string, Schema> = structuredClone(schemas);
  type Declaring = { properties?: Record<string, Schema>; allOf?: Declaring[] };
  const properties = (name: string) => (copy[name] as { properties: Record<string, Schema> }).properties;
  // The properties object that declares `field`: the schema's own, or an inline member of its allOf.
  const declaring = (name: string, field: string) =>
    [copy[name] as Declaring, ...((copy[name] as Declaring).allOf ?? [])].find((s) => s.properties?.[field])
      ?.properties as Record<string, Schema>;
  // The gateway's spec makes `code` the HTTP status, a number; OpenAI's is a string such as
  // 'invalid_api_key'. Its SDKs read `code` untyped, so a number breaks no client.
  properties('Error').code = { anyOf: [{ type: 'string' }, { type: 'integer' }, { type: 'null' }] };
  for (const [name, fields] of Object.entries(NULL_AS_OPENAI_ANSWERS)) {
    for (const field of fields) {
      const declared = declaring(name, field);
      declared[field] = { anyOf: [declared[field], { type: 'null' }] };
    }
  }
  // OpenAI's upload takes purpose `evals` (CreateFileRequest) and its File then names it, but the File's own enum
  // lists every other upload purpose and not that one.
  const purpose = properties('OpenAIFile').purpose as { enum: string[] };
  purpose.enum = [...purpose.enum, 'evals'];
  return copy;
}

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
// OpenAI's own format for Unix timestamps in seconds; the `integer` type beside it is what is checked.
ajv.addFormat('unixtime', true);
ajv.addSchema({ $id: 'openai', components: { schemas: withDeviations(vendored.components.schemas) } });

const compiled = new Map<string, ValidateFunction>();
function validator(name: string): ValidateFunction {
  let validate = compiled.get(name);
  if (!validate) {
    validate = ajv.compile({ $ref: `openai#/components/schemas/${name}` });
    compiled.set(name, validate);
  }
  return validate;
}

/** What in `body` OpenAI's schema `name` does not accept, one line a violation; empty when it conforms. */
export function openAiViolations(name: OpenAiSchema, body: unknown): string[] {
  const validate = validator(name);
  if (validate(body)) return [];
  return (validate.errors ?? []).map(
    (e) => `${name}${e.instancePath} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`,
  );
}

/** The same for one Responses stream event, checked against the schema of its `type`. */
export function streamEventViolations(event: { type?: unknown }): string[] {
  const name = vendored.streamEvents[String(event.type)];
  if (!name) return [`no OpenAI stream event has type ${JSON.stringify(event.type)} (or it is not vendored)`];
  const validate = validator(name);
  if (validate(event)) return [];
  return (validate.errors ?? []).map((e) => `${name}${e.instancePath} ${e.message}`);
}

export const openAiSpecCommit = vendored.upstream.commit;
