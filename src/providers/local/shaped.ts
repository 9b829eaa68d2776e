/**
 * What an echo model answers when the request asks for a shape: a tool call when `tool_choice` forces one, JSON
 * when `response_format` asks for it. The values are the simplest the schema allows, with every string the echoed
 * text, so that a client's tool-calling and structured-output code can be tried with no key. Nothing is decided:
 * a tool is called only when the request forces it.
 */
export type Shaped =
  | { kind: 'text'; text: string }
  | { kind: 'json'; text: string }
  | { kind: 'tool'; name: string; arguments: string };

const isObj = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Nesting followed at most, so a recursive schema still ends. */
const MAX_DEPTH = 8;

/** The simplest value a JSON schema allows, its strings being `text`. */
export function sampleOf(schema: unknown, text: string, depth = 0): unknown {
  if (!isObj(schema) || depth > MAX_DEPTH) return null;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const options = schema[key];
    if (Array.isArray(options) && options.length > 0) return sampleOf(options[0], text, depth + 1);
  }
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  const type =
    types.find((t) => t !== 'null') ?? types[0] ?? (isObj(schema.properties) ? 'object' : undefined);
  switch (type) {
    case 'object': {
      const properties = isObj(schema.properties) ? schema.properties : {};
      return Object.fromEntries(
        Object.entries(properties).map(([key, value]) => [key, sampleOf(value, text, depth + 1)]),
      );
    }
    case 'string':
      return text;
    case 'number':
      return 0.5;
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [sampleOf(schema.items, text, depth + 1)];
    default:
      return null;
  }
}

interface ToolLike {
  type?: unknown;
  function?: { name?: unknown; parameters?: unknown };
}

/** The tool `tool_choice` forces: a named function, or the first tool when any must be called. */
function forcedTool(tools: unknown, choice: unknown): ToolLike | undefined {
  if (!Array.isArray(tools) || tools.length === 0) return undefined;
  const functions = tools.filter(
    (tool): tool is ToolLike => isObj(tool) && isObj(tool.function) && typeof tool.function.name === 'string',
  );
  if (choice === 'required') return functions[0];
  if (isObj(choice) && isObj(choice.function) && typeof choice.function.name === 'string') {
    const name = choice.function.name;
    return functions.find((tool) => tool.function?.name === name);
  }
  return undefined;
}

/** The shape of the echo's answer for a chat-completions request. */
export function shapeEcho(body: Record<string, unknown>, text: string): Shaped {
  const tool = forcedTool(body.tools, body.tool_choice);
  if (tool) {
    const args = sampleOf(tool.function?.parameters ?? { type: 'object' }, text);
    return { kind: 'tool', name: String(tool.function?.name), arguments: JSON.stringify(args ?? {}) };
  }
  const format = body.response_format;
  if (isObj(format) && format.type === 'json_object')
    return { kind: 'json', text: JSON.stringify({ echo: text }) };
  if (isObj(format) && format.type === 'json_schema') {
    const schema = isObj(format.json_schema) ? format.json_schema.schema : undefined;
    const value = isObj(schema) ? sampleOf(schema, text) : { echo: text };
    return { kind: 'json', text: JSON.stringify(value) };
  }
  return { kind: 'text', text };
}
