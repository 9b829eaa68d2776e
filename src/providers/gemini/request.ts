import type { ChatBody, Upstream } from '../../contracts/chat.ts';
import { toGeminiContents } from './contents.ts';
import { toGeminiSchema } from './schema.ts';

type Obj = Record<string, unknown>;

interface GenerationField {
  to: string;
  /** The first of these the client set wins. */
  from: readonly string[];
  /** Temperature and top_p, which some models refuse (quirks.noSampling). */
  sampling?: boolean;
  convert?: (value: unknown) => unknown;
}

/** Chat-completions fields that become `generationConfig` entries one to one. */
const GENERATION_FIELDS: readonly GenerationField[] = [
  { to: 'maxOutputTokens', from: ['max_completion_tokens', 'max_tokens'] },
  { to: 'temperature', from: ['temperature'], sampling: true },
  { to: 'topP', from: ['top_p'], sampling: true },
  { to: 'stopSequences', from: ['stop'], convert: (stop) => (Array.isArray(stop) ? stop : [stop]) },
  { to: 'seed', from: ['seed'] },
];

/** Thinking budgets in tokens for the spec's reasoning efforts (Gemini 2.5 takes a budget, not a level). */
const THINKING_BUDGET: Record<string, number> = {
  none: 0,
  low: 1024,
  medium: 8192,
  high: 24_576,
  xhigh: 32_768,
  max: 32_768,
};

/** Google refuses budgets outside a model family's range: Pro cannot stop thinking, Flash stops lower. */
function withinRange(budget: number, model: string): number {
  if (/pro/i.test(model)) return Math.max(128, budget);
  if (/flash/i.test(model)) return Math.min(24_576, budget);
  return budget;
}

const TOOL_MODE: Record<string, string> = { auto: 'AUTO', required: 'ANY', none: 'NONE' };

function generationConfig(body: ChatBody, upstream: Upstream): Obj {
  const config: Obj = {};
  for (const field of GENERATION_FIELDS) {
    if (field.sampling && upstream.quirks.noSampling) continue;
    const value = field.from.map((name) => body[name]).find((v) => v !== undefined && v !== null);
    if (value !== undefined) config[field.to] = field.convert ? field.convert(value) : value;
  }
  const format = body.response_format as { type?: string; json_schema?: { schema?: unknown } } | undefined;
  if (format?.type === 'json_object' || format?.type === 'json_schema') {
    config.responseMimeType = 'application/json';
    const schema = format.type === 'json_schema' ? toGeminiSchema(format.json_schema?.schema) : undefined;
    if (schema) config.responseSchema = schema;
  }
  // Only thinking models take a thinkingConfig; they all think by default, so their thoughts are always asked
  // for (reasoning_content) unless the client turned thinking off.
  if (upstream.quirks.reasoning) {
    const effort =
      typeof body.reasoning_effort === 'string' ? THINKING_BUDGET[body.reasoning_effort] : undefined;
    const budget = effort === undefined ? undefined : withinRange(effort, upstream.model);
    config.thinkingConfig =
      budget === 0
        ? { thinkingBudget: 0 }
        : { ...(budget !== undefined && { thinkingBudget: budget }), includeThoughts: true };
  }
  return config;
}

function functionDeclarations(tools: unknown): Obj[] {
  if (!Array.isArray(tools)) return [];
  return tools.flatMap((tool): Obj[] => {
    const t = tool as {
      type?: string;
      function?: { name?: string; description?: string; parameters?: unknown };
    };
    if ((t.type !== undefined && t.type !== 'function') || !t.function?.name) return [];
    const parameters = toGeminiSchema(t.function.parameters);
    return [
      {
        name: t.function.name,
        ...(t.function.description !== undefined && { description: t.function.description }),
        // A function without arguments has no `parameters`: Gemini refuses an OBJECT without properties.
        ...(parameters?.properties !== undefined && { parameters }),
      },
    ];
  });
}

function toolConfig(choice: unknown): Obj | undefined {
  if (typeof choice === 'string') {
    const mode = TOOL_MODE[choice];
    return mode ? { functionCallingConfig: { mode } } : undefined;
  }
  const name = (choice as { function?: { name?: string } } | undefined)?.function?.name;
  return name ? { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [name] } } : undefined;
}

/** A chat-completions request as a Gemini GenerateContentRequest (the model travels in the URL). */
export function toGeminiRequest(body: ChatBody, upstream: Upstream): Obj {
  const { systemInstruction, contents } = toGeminiContents(body.messages);
  const declarations = functionDeclarations(body.tools);
  const config = generationConfig(body, upstream);
  const tooling = declarations.length > 0 ? toolConfig(body.tool_choice) : undefined;
  return {
    contents,
    ...(systemInstruction && { systemInstruction }),
    ...(declarations.length > 0 && { tools: [{ functionDeclarations: declarations }] }),
    ...(tooling && { toolConfig: tooling }),
    ...(Object.keys(config).length > 0 && { generationConfig: config }),
  };
}
