type Obj = Record<string, unknown>;

const isObj = (value: unknown): value is Obj =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The keywords of Google's Schema (an OpenAPI 3.0 subset) copied as they are. Gemini rejects the request over
 * any keyword it does not know (`$schema`, `additionalProperties`, `strict`, ...), so this is a list of what
 * to keep rather than of what to drop.
 */
const PLAIN_KEYWORDS = new Set([
  'format',
  'title',
  'description',
  'nullable',
  'required',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
  'default',
  'example',
  'propertyOrdering',
]);

type Definitions = Record<string, unknown>;

/** A JSON schema as Gemini's `parameters` / `responseSchema` take it; local `$ref`s are inlined. */
export function toGeminiSchema(schema: unknown): Obj | undefined {
  if (!isObj(schema)) return undefined;
  const definitions = { ...asObj(schema.definitions), ...asObj(schema.$defs) };
  return clean(schema, definitions, new Set());
}

function asObj(value: unknown): Obj {
  return isObj(value) ? value : {};
}

function clean(node: Obj, definitions: Definitions, expanding: Set<string>): Obj {
  if (typeof node.$ref === 'string') {
    const name = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(node.$ref)?.[1];
    const target = name === undefined ? undefined : definitions[name];
    // Google's Schema has no references: a recursive one is cut off where it would repeat.
    if (name === undefined || !isObj(target) || expanding.has(name)) return { type: 'object' };
    const { $ref: _ref, ...siblings } = node;
    return clean({ ...target, ...siblings }, definitions, new Set([...expanding, name]));
  }
  const out: Obj = {};
  for (const [key, value] of Object.entries(node)) {
    if (PLAIN_KEYWORDS.has(key)) out[key] = value;
    else if (key === 'type') Object.assign(out, typeOf(value));
    // Google's enum holds strings only; a null member is said by `nullable` (from the type) instead.
    else if (key === 'enum' && Array.isArray(value)) out.enum = value.filter((v) => v !== null);
    else if (key === 'const' && typeof value === 'string') out.enum = [value];
    else if (key === 'items' && isObj(value)) out.items = clean(value, definitions, expanding);
    else if ((key === 'anyOf' || key === 'oneOf') && Array.isArray(value)) {
      out.anyOf = value.filter(isObj).map((branch) => clean(branch, definitions, expanding));
    } else if (key === 'properties' && isObj(value) && Object.keys(value).length > 0) {
      // Gemini refuses an OBJECT whose `properties` is present but empty.
      out.properties = Object.fromEntries(
        Object.entries(value).map(([name, property]) => [
          name,
          clean(asObj(property), definitions, expanding),
        ]),
      );
    }
  }
  return out;
}

/** JSON schema's `type: [t, "null"]` is Google's `type: t, nullable: true`. */
function typeOf(value: unknown): Obj {
  if (!Array.isArray(value)) return { type: value };
  const types = value.filter((t) => t !== 'null');
  const nullable = types.length < value.length ? { nullable: true } : {};
  if (types.length === 1) return { type: types[0], ...nullable };
  return { anyOf: types.map((type) => ({ type })), ...nullable };
}
