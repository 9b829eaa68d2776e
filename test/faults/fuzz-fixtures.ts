import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { dropSchema } from '../support/database.ts';
import { type Json, json } from '../support/json.ts';
import type { FaultGateway, Sent } from './fault-gateway.ts';
import type { FuzzRequest } from './fuzz-requests.ts';

/** Real ids for the fuzzer's placeholders: what a well-meaning client would put in a path. */
export interface Fixtures {
  fileId: string;
  batchId: string;
  subId: string;
  subKey: string;
  /** An account of its own for the admin routes, so that fuzzing its settings leaves the demo account alone. */
  victimAccountId: string;
  victimKeyId: string;
}

const BATCH_LINE = JSON.stringify({
  custom_id: 'one',
  method: 'POST',
  url: '/v1/chat/completions',
  body: { model: 'local/echo', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] },
});

export async function makeFixtures(gateway: FaultGateway): Promise<Fixtures> {
  const auth = { authorization: `Bearer ${gateway.key}` };
  const form = new FormData();
  form.append('purpose', 'batch');
  form.append('file', new Blob([`${BATCH_LINE}\n`]), 'input.jsonl');
  const file: Json = await json(
    await fetch(`${gateway.url}/v1/files`, { method: 'POST', headers: auth, body: form }),
  );
  const post = async (path: string, body: unknown): Promise<Json> =>
    json(
      await fetch(`${gateway.url}/v1${path}`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }),
    );
  const batch = await post('/batches', {
    input_file_id: file.id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
  });
  const sub = await post('/sub-accounts', {
    name: 'fuzz-sub',
    spend_cap_cents: 1000,
    rate_limit_rpm: 1_000_000,
  });
  const victim = (await gateway.admin('/accounts', { name: 'victim' })).json as Record<string, string>;
  if (!sub.id || !victim.account_id) throw new Error(`fixtures failed: ${JSON.stringify({ sub, victim })}`);
  // Without a stored file and batch the fuzzer still runs, on ids that do not exist; the run says so.
  if (!file.id || !batch.id)
    console.log(`FAULTS fuzz fixtures incomplete: ${JSON.stringify({ file, batch })}`);
  return {
    fileId: file.id ?? 'file-missing',
    batchId: batch.id ?? 'batch_missing',
    subId: sub.id,
    subKey: sub.key,
    victimAccountId: victim.account_id,
    victimKeyId: victim.key_id as string,
  };
}

/** The generated request with its placeholders filled and its credential chosen. */
export function resolve(request: FuzzRequest, gateway: FaultGateway, fixtures: Fixtures): Sent {
  const { path: template } = request.route;
  const idFor = (): string => {
    if (template.startsWith('/v1/batches')) return fixtures.batchId;
    if (template.startsWith('/v1/files')) return fixtures.fileId;
    if (template.startsWith('/v1/sub-accounts')) return fixtures.subId;
    return 'job_does_not_exist';
  };
  const path = request.path
    .replace(':id', idFor())
    .replace(':accountId', fixtures.victimAccountId)
    .replace(':keyId', fixtures.victimKeyId)
    .replace(':key_id', 'key_does_not_exist')
    .replace(':tag', 'fuzz')
    .replace(':provider', 'openai')
    .replace(':name', 'fuzz')
    .replace(':jobId', 'job_does_not_exist')
    .replace(':filename', 'out.png')
    .replace(
      /\*(?=$|\?)/,
      template.startsWith('/media') ? 'jobs/x/out.png?expires=1&signature=00' : 'gpt-4o',
    );
  const token = {
    main: gateway.key,
    sub: fixtures.subKey,
    admin: gateway.adminToken,
    garbage: 'sk-gw-\u00ff\u00fe not a key',
    none: undefined,
  }[request.credential];
  const headers: Record<string, string> = {};
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  if (request.contentType !== undefined) headers['content-type'] = request.contentType;
  // The MCP endpoint's clients accept JSON or a stream (Streamable HTTP); without it every POST is a 406.
  if (request.route.path === '/mcp') headers.accept = 'application/json, text/event-stream';
  const body =
    typeof request.body === 'string'
      ? request.body.replaceAll('":fileId"', `"${fixtures.fileId}"`)
      : request.body;
  return { method: request.method, path, headers, body, timeoutMs: 20_000 };
}

/** The live route table: the runtime started as `npm start` starts it, in a schema of its own, then dropped. */
export async function printLiveRoutes(): Promise<string> {
  const schema = `f_${randomBytes(6).toString('hex')}`;
  const dataDir = await mkdtemp(join(tmpdir(), 'gw-routes-'));
  try {
    return await new Promise<string>((done, fail) =>
      execFile(
        process.execPath,
        ['--import', 'tsx', join(import.meta.dirname, 'print-routes.ts')],
        {
          env: {
            ...process.env,
            DATABASE_URL: inject('databaseUrl'),
            GATEWAY_DB_SCHEMA: schema,
            GATEWAY_DATA_DIR: dataDir,
            GATEWAY_ADMIN_TOKEN: 'gw-admin-print-routes-0123456789',
            PORT: '0',
            LOG_LEVEL: 'silent',
          },
          timeout: 60_000,
        },
        (error, stdout, stderr) => (error ? fail(new Error(`${error.message}\n${stderr}`)) : done(stdout)),
      ),
    );
  } finally {
    await dropSchema(schema);
    await rm(dataDir, { recursive: true, force: true });
  }
}
