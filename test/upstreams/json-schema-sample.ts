// Not model.ts's isObj: model.ts imports this file.
const isObj = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The simulators' answer to a structured-output request: the simplest value the JSON schema allows, so a test can
 * predict it. An object gets every property; a string its first `enum` value, else "sim"; a number 0.5; an integer
 * 1; a boolean true; an array one item; anything else null.
 */
export function sampleOf(schema: unknown): unknown {
  if (!isObj(schema)) return null;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'object':
      return Object.fromEntries(
        Object.entries(isObj(schema.properties) ? schema.properties : {}).map(([k, v]) => [k, sampleOf(v)]),
      );
    case 'string':
      return 'sim';
    case 'number':
      return 0.5;
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [sampleOf(schema.items)];
    default:
      return null;
  }
}

/** The schema of an OpenAI `response_format` of type json_schema, when it names properties to fill. */
export function structuredSchema(responseFormat: unknown): unknown {
  if (!isObj(responseFormat) || responseFormat.type !== 'json_schema') return undefined;
  const schema = isObj(responseFormat.json_schema) ? responseFormat.json_schema.schema : undefined;
  return isObj(schema) && isObj(schema.properties) && Object.keys(schema.properties).length > 0
    ? schema
    : undefined;
}
