import { z } from 'zod';
import { MODALITIES } from '../../catalog/types.ts';
import { defineTool } from '../tool.ts';
import { TwinRefused } from '../twin.ts';
import { Id } from './common.ts';
import { body } from './served.ts';

/**
 * `openrouter/openai/gpt-4o` → `/v1/models/openrouter%2Fopenai%2Fgpt-4o`: the whole id is one encoded segment,
 * which the catalog route takes as a whole id, so that no id (`../balance`) can name another route. A bare `.`
 * or `..` would still be a dot segment the URL parser resolves, and is no model: refused as the catalog would.
 */
export function modelPath(id: string): string {
  if (id === '.' || id === '..') {
    throw new TwinRefused(404, undefined, `HTTP 404 (model_not_found): The model '${id}' does not exist`);
  }
  return `/v1/models/${encodeURIComponent(id)}`;
}

export const listModelsTool = defineTool({
  name: 'list_models',
  title: 'List models',
  description:
    'Lists the models this gateway can serve now (or, with all, the whole catalog) with their prices (USD), ' +
    'context window, capabilities and availability; filter by modality, provider and capability (GET /v1/models).',
  access: 'read',
  input: z.object({
    modality: z.enum(MODALITIES).optional(),
    provider: z.string().min(1).max(100).optional().describe('A provider id such as openai or anthropic'),
    capability: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe(
        'Only models with this capability, e.g. vision or function_calling (see the capabilities list)',
      ),
    limit: z.number().int().min(1).max(1000).default(100).describe('At most this many models'),
    all: z
      .boolean()
      .default(false)
      .describe('The whole catalog, including models this gateway cannot serve now (with why not)'),
  }),
  async run({ modality, provider, capability, limit, all: whole }, { twin }) {
    const query = { modality, provider, ...(whole && { all: 'true' }) };
    const answer = await twin({ method: 'GET', path: '/v1/models', query });
    const all = body<{ data?: { capabilities?: string[] }[] }>(answer).data ?? [];
    const matching = capability ? all.filter((m) => m.capabilities?.includes(capability)) : all;
    return { total: matching.length, data: matching.slice(0, limit) };
  },
});

export const getModelTool = defineTool({
  name: 'get_model',
  title: 'Describe a model',
  description:
    "One model's record: prices, context window, capabilities, and how to call it (endpoint, examples) " +
    '(GET /v1/models/{id}).',
  access: 'read',
  input: z.object({ id: Id("The model's id, e.g. openai/gpt-4o-mini") }),
  async run({ id }, { twin }) {
    return body<Record<string, unknown>>(await twin({ method: 'GET', path: modelPath(id) }));
  },
});
