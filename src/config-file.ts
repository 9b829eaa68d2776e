import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { providerEnv } from './provider-env.ts';

/**
 * The optional config file (GATEWAY_CONFIG, JSON): provider keys and base URLs for those who prefer a file to
 * environment variables (the environment wins where both are set), and per-model fallback lists.
 *
 *   { "providers": { "openai": { "api_key": "sk-...", "base_url": "https://api.openai.com/v1" } },
 *     "fallbacks": { "openai/gpt-4o": ["anthropic/claude-sonnet-4-5"] } }
 */
const ConfigFile = z.object({
  providers: z
    .record(
      z.string(),
      z.object({ api_key: z.string().min(1).optional(), base_url: z.string().url().optional() }),
    )
    .default({}),
  fallbacks: z.record(z.string(), z.array(z.string().min(1))).default({}),
  /** The models the automatic router may choose: allowed (all when absent) minus excluded; `*` is a wildcard. */
  routing: z
    .object({
      allowed: z.array(z.string().min(1)).optional(),
      excluded: z.array(z.string().min(1)).default([]),
    })
    .default({ excluded: [] }),
  /** Batch lines: which providers' batch APIs to use, and what the others get (GATEWAY_BATCH_APIS, _FALLBACK). */
  batches: z
    .object({
      apis: z.array(z.string().min(1)).optional(),
      fallback: z.enum(['full_price', 'refuse']).optional(),
    })
    .optional(),
});

export interface FileSettings {
  /** Provider variables the file supplies, named as in the environment. */
  variables: Record<string, string>;
  fallbacks: Record<string, string[]>;
  routing: { allowed: string[] | null; excluded: string[] };
}

export class ConfigFileError extends Error {
  override readonly name = 'ConfigFileError';
}

export function readConfigFile(path: string | undefined): FileSettings {
  if (!path) return { variables: {}, fallbacks: {}, routing: { allowed: null, excluded: [] } };
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ConfigFileError(`cannot read GATEWAY_CONFIG ${path}: ${(error as Error).message}`);
  }
  const parsed = ConfigFile.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigFileError(`invalid GATEWAY_CONFIG ${path}: ${issues}`);
  }
  const variables: Record<string, string> = {};
  for (const [provider, settings] of Object.entries(parsed.data.providers)) {
    const names = providerEnv(provider);
    if (settings.api_key) variables[names.keyVar] = settings.api_key;
    if (settings.base_url) variables[names.baseUrlVar] = settings.base_url;
  }
  const batches = parsed.data.batches;
  if (batches?.apis) variables.GATEWAY_BATCH_APIS = batches.apis.length > 0 ? batches.apis.join(',') : 'none';
  if (batches?.fallback) variables.GATEWAY_BATCH_FALLBACK = batches.fallback;
  const { allowed, excluded } = parsed.data.routing;
  return { variables, fallbacks: parsed.data.fallbacks, routing: { allowed: allowed ?? null, excluded } };
}
