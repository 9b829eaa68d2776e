import { resolve } from 'node:path';
import { z } from 'zod';
import { type FileSettings, readConfigFile } from './config-file.ts';

const Env = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default('127.0.0.1'),
  GATEWAY_DATA_DIR: z.string().default('./data'),
  GATEWAY_EVENT_STORE: z.enum(['postgres', 'esdb']).default('postgres'),
  DATABASE_URL: z.string().optional(),
  GATEWAY_DB_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]*$/, 'a lower-case SQL identifier')
    .default('gateway'),
  ESDB_URL: z.string().optional(),
  REDIS_URL: z.string().optional(),
  GATEWAY_ADMIN_TOKEN: z.string().min(16).optional(),
  GATEWAY_ADMIN_TOKEN_PREVIOUS: z.string().min(16).optional(),
  GATEWAY_SIGNING_SECRET: z.string().min(16).optional(),
  GATEWAY_OPERATOR_ACCOUNT: z
    .string()
    .regex(/^acct_[A-Za-z0-9]+$/, 'an account id (acct_…)')
    .optional(),
  GATEWAY_URL: z.string().optional(),
  GATEWAY_MEDIA_URL: z.string().url().optional(),
  GATEWAY_MCP_URL: z.string().url().optional(),
  GATEWAY_MCP_ALLOWED_HOSTS: z.string().optional(),
  GATEWAY_DEMO_CREDIT_CENTS: z.coerce.number().int().min(0).default(500),
  GATEWAY_UPSTREAM_TIMEOUT_MS: z.coerce.number().int().positive().default(60_000),
  GATEWAY_MAX_RETRY_WAIT_MS: z.coerce.number().int().min(0).default(10_000),
  GATEWAY_MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(10 * 1024 * 1024),
  GATEWAY_HEADERS_TIMEOUT_MS: z.coerce.number().int().positive().default(15_000),
  GATEWAY_BODY_TIMEOUT_MS: z.coerce.number().int().positive().default(30_000),
  GATEWAY_REQUEST_TIMEOUT_MS: z.coerce.number().int().positive().default(300_000),
  GATEWAY_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().positive().default(65_000),
  GATEWAY_STORAGE_QUOTA_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(10 * 1024 ** 3),
  GATEWAY_REQUEST_BODIES: z.enum(['keep', 'drop']).default('keep'),
  GATEWAY_SPEND_LEASES: z.enum(['on', 'off']).default('on'),
  GATEWAY_REQUEST_RETENTION_DAYS: z.coerce.number().int().positive().default(30),
  GATEWAY_HEAP_GROWTH_PERCENT: z.coerce.number().int().min(0).max(400).default(25),
  GATEWAY_CACHE_EMBEDDING_MODEL: z.string().optional(),
  GATEWAY_CACHE_SEMANTIC_THRESHOLD: z.coerce.number().min(0).max(1).default(0.95),
  GATEWAY_CACHE_TTL_S: z.coerce.number().int().positive().default(86_400),
  GATEWAY_CONFIG: z.string().optional(),
  GATEWAY_BLOB_STORE: z.enum(['fs', 's3']).default('fs'),
  S3_BUCKET: z.string().optional(),
  S3_ENDPOINT: z.string().url().optional(),
  S3_REGION: z.string().default('us-east-1'),
  S3_ACCESS_KEY_ID: z.string().optional(),
  S3_SECRET_ACCESS_KEY: z.string().optional(),
  S3_FORCE_PATH_STYLE: z.enum(['true', 'false']).optional(),
  S3_PREFIX: z.string().default(''),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

/** How long and how much the HTTP server waits for and reads of a client's request (docs/api.md, Limits). */
export interface EdgeLimits {
  /** Largest JSON or text body; past it, 413 before parsing. */
  maxBodyBytes: number;
  /** The request line and headers must arrive within this. */
  headersTimeoutMs: number;
  /** A JSON or text body must arrive within this once its headers have. */
  bodyTimeoutMs: number;
  /** The whole request, uploads included, must arrive within this. */
  requestTimeoutMs: number;
  /** An idle kept-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
}

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  eventStore: 'postgres' | 'esdb';
  databaseUrl: string | undefined;
  dbSchema: string;
  esdbUrl: string | undefined;
  redisUrl: string | undefined;
  adminToken: string | undefined;
  /** Also accepted on admin routes while a new admin token rolls out (docs/operations.md). */
  adminTokenPrevious: string | undefined;
  /** What webhook secrets and media URL signatures derive from; the admin token when unset. */
  signingSecret: string | undefined;
  /**
   * The account whose webhook endpoints receive the operator's notices (a credential out of rotation, …), never
   * a customer's; without it those notices are recorded and logged but delivered nowhere (docs/webhooks.md).
   */
  operatorAccountId: string | undefined;
  gatewayUrl: string;
  /** Where signed media URLs point (the gateway's own `/media` route unless set). */
  mediaUrl: string | undefined;
  /** The MCP server's public URL (the gateway's own `/mcp` unless set). */
  mcpUrl: string | undefined;
  /** Host names `/mcp` answers besides localhost and those of the gateway's and the MCP server's URLs. */
  mcpAllowedHosts: string[];
  demoCreditCents: number;
  /** How long to wait for a provider's response headers. */
  upstreamTimeoutMs: number;
  /** The longest Retry-After from a provider that the gateway waits out before passing the 429 on. */
  maxRetryWaitMs: number;
  /**
   * Where provider keys and base URLs are read (`<PROVIDER>_API_KEY`, `<PROVIDER>_BASE_URL`): the environment,
   * over the config file's providers.
   */
  env: NodeJS.ProcessEnv;
  /** Models to fall back to, per model, when a request names none (config file). */
  fallbacks: Record<string, string[]>;
  /** The automatic router's model lists from the config file. */
  routing: FileSettings['routing'];
  /** The providers' key pools from the config file (docs/providers.md#key-pools). */
  pools: FileSettings['pools'];
  logLevel: z.infer<typeof Env>['LOG_LEVEL'];
  edge: EdgeLimits;
  /** Bytes of files an account (its sub-accounts included) may keep; uploads past it are refused. */
  storageQuotaBytes: number;
  /** Whether the request log keeps request and response bodies, and for how many days. */
  requestBodies: 'keep' | 'drop';
  /** Requests admitted in memory under spend leases (docs/billing.md); off: every request holds on its own. */
  spendLeases: boolean;
  requestRetentionDays: number;
  /**
   * How far V8 lets the JavaScript heap grow past what a full collection kept before it collects again, in
   * percent (docs/performance.md#memory); 0 leaves V8's own growth (up to 4x under load).
   */
  heapGrowthPercent: number;
  /** The response cache: entry lifetime, the semantic threshold and the embedding model (docs/cache.md). */
  cache: { ttlMs: number; threshold: number; embeddingModel: string | undefined };
  /** Where file bytes live: the data directory (one instance) or an S3 bucket shared by several. */
  blobStore: { kind: 'fs' } | ({ kind: 's3' } & S3Settings);
}

/** An S3-compatible bucket for the blobs (docs/operations.md). */
export interface S3Settings {
  bucket: string;
  /** An S3-compatible endpoint (MinIO, R2, …); AWS's own when unset. */
  endpoint: string | undefined;
  region: string;
  accessKeyId: string | undefined;
  secretAccessKey: string | undefined;
  /** Bucket in the path (MinIO and most compatible stores) rather than in the host name. */
  forcePathStyle: boolean;
  /** Prepended to every key, so that one bucket can hold several gateways' blobs. */
  prefix: string;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // An empty variable means unset, as in most shells' `VAR= command`.
  const given = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const parsed = Env.safeParse(given);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`invalid configuration: ${issues}`);
  }
  const e = parsed.data;
  let file: FileSettings;
  try {
    file = readConfigFile(e.GATEWAY_CONFIG, given);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  if (e.GATEWAY_BLOB_STORE === 's3' && !e.S3_BUCKET) {
    throw new ConfigError(
      'GATEWAY_BLOB_STORE=s3 needs S3_BUCKET (and S3_ENDPOINT for MinIO or another S3-compatible store)',
    );
  }
  if (e.GATEWAY_EVENT_STORE === 'esdb' && !e.ESDB_URL) {
    throw new ConfigError(
      'GATEWAY_EVENT_STORE=esdb needs ESDB_URL (for example esdb://127.0.0.1:2113?tls=false)',
    );
  }
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir: resolve(e.GATEWAY_DATA_DIR),
    eventStore: e.GATEWAY_EVENT_STORE,
    databaseUrl: e.DATABASE_URL || undefined,
    dbSchema: e.GATEWAY_DB_SCHEMA,
    esdbUrl: e.ESDB_URL,
    redisUrl: e.REDIS_URL || undefined,
    adminToken: e.GATEWAY_ADMIN_TOKEN,
    adminTokenPrevious: e.GATEWAY_ADMIN_TOKEN_PREVIOUS,
    signingSecret: e.GATEWAY_SIGNING_SECRET,
    operatorAccountId: e.GATEWAY_OPERATOR_ACCOUNT ?? file.operatorAccount,
    gatewayUrl: e.GATEWAY_URL ?? `http://127.0.0.1:${e.PORT}`,
    mediaUrl: e.GATEWAY_MEDIA_URL,
    mcpUrl: e.GATEWAY_MCP_URL,
    mcpAllowedHosts: (e.GATEWAY_MCP_ALLOWED_HOSTS ?? '')
      .split(',')
      .map((host) => host.trim().toLowerCase())
      .filter(Boolean),
    demoCreditCents: e.GATEWAY_DEMO_CREDIT_CENTS,
    upstreamTimeoutMs: e.GATEWAY_UPSTREAM_TIMEOUT_MS,
    maxRetryWaitMs: e.GATEWAY_MAX_RETRY_WAIT_MS,
    env: { ...file.variables, ...given },
    fallbacks: file.fallbacks,
    routing: file.routing,
    pools: file.pools,
    logLevel: e.LOG_LEVEL,
    edge: {
      maxBodyBytes: e.GATEWAY_MAX_BODY_BYTES,
      headersTimeoutMs: e.GATEWAY_HEADERS_TIMEOUT_MS,
      bodyTimeoutMs: e.GATEWAY_BODY_TIMEOUT_MS,
      requestTimeoutMs: e.GATEWAY_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: e.GATEWAY_KEEP_ALIVE_TIMEOUT_MS,
    },
    storageQuotaBytes: e.GATEWAY_STORAGE_QUOTA_BYTES,
    requestBodies: e.GATEWAY_REQUEST_BODIES,
    spendLeases: e.GATEWAY_SPEND_LEASES === 'on',
    requestRetentionDays: e.GATEWAY_REQUEST_RETENTION_DAYS,
    heapGrowthPercent: e.GATEWAY_HEAP_GROWTH_PERCENT,
    cache: {
      ttlMs: e.GATEWAY_CACHE_TTL_S * 1000,
      threshold: e.GATEWAY_CACHE_SEMANTIC_THRESHOLD,
      embeddingModel: e.GATEWAY_CACHE_EMBEDDING_MODEL,
    },
    blobStore:
      e.GATEWAY_BLOB_STORE === 's3'
        ? {
            kind: 's3',
            bucket: e.S3_BUCKET as string,
            endpoint: e.S3_ENDPOINT,
            region: e.S3_REGION,
            accessKeyId: e.S3_ACCESS_KEY_ID,
            secretAccessKey: e.S3_SECRET_ACCESS_KEY,
            // Compatible stores are addressed by path unless told otherwise; AWS by host name.
            forcePathStyle: e.S3_FORCE_PATH_STYLE
              ? e.S3_FORCE_PATH_STYLE === 'true'
              : e.S3_ENDPOINT !== undefined,
            prefix: e.S3_PREFIX,
          }
        : { kind: 'fs' },
  };
}
