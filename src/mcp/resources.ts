import type { ReadResourceResult, Resource, ResourceTemplateType } from '@modelcontextprotocol/server';
import { ResourceNotFoundError } from '@modelcontextprotocol/server';
import { modelPath } from './tools/catalog.ts';
import { body } from './tools/served.ts';
import { type Twin, TwinRefused } from './twin.ts';

const CATALOG = 'models://catalog';
const USAGE = 'usage://summary';
const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

export const RESOURCES: Resource[] = [
  {
    uri: CATALOG,
    name: 'model-catalog',
    title: 'Model catalog',
    description:
      'Every model of the gateway with its prices, context window and capabilities (GET /v1/models)',
    mimeType: 'application/json',
  },
  {
    uri: USAGE,
    name: 'usage-summary',
    title: "This month's usage",
    description: 'The balance and this UTC month’s requests and spend by tag, sub-account and model',
    mimeType: 'application/json',
  },
];

export const RESOURCE_TEMPLATES: ResourceTemplateType[] = [
  {
    uriTemplate: 'models://{provider}/{model}',
    name: 'model',
    title: 'One model',
    description: "One model's record with its prices and how to call it (GET /v1/models/{id})",
    mimeType: 'application/json',
  },
  {
    uriTemplate: 'usage://summary/{month}',
    name: 'usage-summary-of-month',
    title: "A month's usage",
    description: 'The balance and one UTC month’s (YYYY-MM) requests and spend by tag, sub-account and model',
    mimeType: 'application/json',
  },
];

/** Reads a resource through the same HTTP twins as the tools, with the caller's key. */
export async function readResource(uri: string, twin: Twin): Promise<ReadResourceResult> {
  const json = (value: unknown): ReadResourceResult => ({
    contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(value) }],
  });
  try {
    if (uri === CATALOG) {
      return json(body(await twin({ method: 'GET', path: '/v1/models', query: { all: 'true' } })));
    }
    if (uri.startsWith('models://')) {
      return json(body(await twin({ method: 'GET', path: modelPath(modelIdOf(uri)) })));
    }
    if (uri === USAGE || uri.startsWith(`${USAGE}/`)) {
      const month = uri === USAGE ? undefined : uri.slice(USAGE.length + 1);
      if (month !== undefined && !MONTH.test(month)) throw new ResourceNotFoundError(uri);
      return json(await usageSummary(twin, month));
    }
  } catch (error) {
    // The API's 404 (an unknown model) is the protocol's resource-not-found; other refusals stay errors.
    if (error instanceof TwinRefused && error.status === 404)
      throw new ResourceNotFoundError(uri, error.message);
    throw error;
  }
  throw new ResourceNotFoundError(uri);
}

/** The model id a `models://` URI names, its escapes (`%2F`) decoded; a malformed escape names no model. */
function modelIdOf(uri: string): string {
  try {
    return decodeURIComponent(uri.slice('models://'.length));
  } catch {
    throw new ResourceNotFoundError(uri);
  }
}

async function usageSummary(twin: Twin, month: string | undefined) {
  const get = async (path: string, query?: Record<string, string | undefined>) =>
    body<Record<string, unknown>>(await twin({ method: 'GET', path, query }));
  const [balance, byTag, bySubAccount, byModel] = await Promise.all([
    get('/v1/balance'),
    get('/v1/usage/by-tag', { month }),
    get('/v1/usage/by-sub-account', { month }),
    get('/v1/usage/by-model', { month }),
  ]);
  return {
    month: byTag.month,
    balance,
    by_tag: byTag.data,
    by_sub_account: bySubAccount.data,
    by_model: byModel.data,
  };
}
