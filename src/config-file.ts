import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { providerEnv, providerKey } from './provider-env.ts';

/** A pool credential's name and settings, the same in the config file and the admin API (docs/providers.md). */
export const credentialFields = {
  name: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'letters, digits, `.`, `_` or `-`, at most 64')
    .refine((name) => name !== 'default', "'default' names the provider's single api_key"),
  weight: z.number().int().min(0).max(1_000_000),
  /** Requests and tokens per minute, and pass-through per UTC month, past which the pool skips the credential. */
  rpm: z.number().int().positive(),
  tpm: z.number().int().positive(),
  monthly_spend_cents: z.number().int().positive(),
};

/**
 * The optional config file (GATEWAY_CONFIG, JSON): provider keys and base URLs for those who prefer a file to
 * environment variables (the environment wins where both are set), and per-model fallback lists.
 *
 *   { "providers": { "openai": { "api_key": "sk-...", "base_url": "https://api.openai.com/v1" } },
 *     "fallbacks": { "openai/gpt-4o": ["anthropic/claude-sonnet-4-5"] } }
 *
 * A provider may have a pool of several keys instead (`keys`, docs/providers.md#key-pools); its single key, when
 * set too, joins the pool as `default`.
 */
const PoolKey = z
  .object({
    name: credentialFields.name,
    key: z.string().min(1).optional(),
    /** The environment variable holding the secret, so that the file itself need not. */
    key_env: z.string().min(1).optional(),
    weight: credentialFields.weight.default(1),
    rpm: credentialFields.rpm.optional(),
    tpm: credentialFields.tpm.optional(),
    monthly_spend_cents: credentialFields.monthly_spend_cents.optional(),
  })
  .strict()
  .refine((k) => (k.key === undefined) !== (k.key_env === undefined), {
    message: 'give exactly one of key and key_env',
    path: ['key'],
  });

const ConfigFile = z.object({
  providers: z
    .record(
      z.string(),
      z.object({
        api_key: z.string().min(1).optional(),
        base_url: z.string().url().optional(),
        keys: z
          .array(PoolKey)
          .min(1)
          .refine((keys) => new Set(keys.map((k) => k.name)).size === keys.length, 'names must be unique')
          .optional(),
      }),
    )
    .default({}),
  fallbacks: z.record(z.string(), z.array(z.string().min(1))).default({}),
  /** The operator's own account, for its notices (GATEWAY_OPERATOR_ACCOUNT wins). */
  operator_account: z
    .string()
    .regex(/^acct_[A-Za-z0-9]+$/, 'an account id (acct_…)')
    .optional(),
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

/** One operator credential of a provider, as the config file (or `<PROVIDER>_API_KEY`, named `default`) gives it. */
export interface CredentialSpec {
  /** Stable within its provider: charges, health, the admin API and later records name the credential by it. */
  name: string;
  key: string;
  weight: number;
  /** The operator's limits (`monthlySpendNanos`: pass-through per UTC month). */
  limits?: { rpm?: number; tpm?: number; monthlySpendNanos?: bigint };
}

export interface FileSettings {
  /** Provider variables the file supplies, named as in the environment. */
  variables: Record<string, string>;
  fallbacks: Record<string, string[]>;
  routing: { allowed: string[] | null; excluded: string[] };
  /** Each provider's key pool, by provider id, with `default` (its single key) first when set. */
  pools: Record<string, CredentialSpec[]>;
  /** The account the operator's notices go to (docs/webhooks.md). */
  operatorAccount: string | undefined;
}

export class ConfigFileError extends Error {
  override readonly name = 'ConfigFileError';
}

export function readConfigFile(path: string | undefined, env: NodeJS.ProcessEnv = {}): FileSettings {
  if (!path) {
    return {
      variables: {},
      fallbacks: {},
      routing: { allowed: null, excluded: [] },
      pools: {},
      operatorAccount: undefined,
    };
  }
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
  const pools: Record<string, CredentialSpec[]> = {};
  for (const [provider, settings] of Object.entries(parsed.data.providers)) {
    const names = providerEnv(provider);
    if (settings.api_key) variables[names.keyVar] = settings.api_key;
    if (settings.base_url) variables[names.baseUrlVar] = settings.base_url;
    if (!settings.keys) continue;
    const single = providerKey(provider, { ...variables, ...env });
    const keys = settings.keys.map((k, i) => {
      const key = k.key ?? env[k.key_env as string];
      if (!key) {
        throw new ConfigFileError(
          `invalid GATEWAY_CONFIG ${path}: providers.${provider}.keys.${i}.key_env: ${k.key_env} is not set`,
        );
      }
      const limits = {
        ...(k.rpm !== undefined && { rpm: k.rpm }),
        ...(k.tpm !== undefined && { tpm: k.tpm }),
        ...(k.monthly_spend_cents !== undefined && {
          monthlySpendNanos: BigInt(k.monthly_spend_cents) * 10_000_000n,
        }),
      };
      return { name: k.name, key, weight: k.weight, ...(Object.keys(limits).length > 0 && { limits }) };
    });
    pools[provider] = [...(single ? [{ name: 'default', key: single, weight: 1 }] : []), ...keys];
    // Availability and the model list ask for the provider's key: with no single key, the pool's first stands in.
    if (!single) variables[names.keyVar] = keys[0]?.key as string;
  }
  const batches = parsed.data.batches;
  if (batches?.apis) variables.GATEWAY_BATCH_APIS = batches.apis.length > 0 ? batches.apis.join(',') : 'none';
  if (batches?.fallback) variables.GATEWAY_BATCH_FALLBACK = batches.fallback;
  const { allowed, excluded } = parsed.data.routing;
  return {
    variables,
    fallbacks: parsed.data.fallbacks,
    routing: { allowed: allowed ?? null, excluded },
    pools,
    operatorAccount: parsed.data.operator_account,
  };
}
