import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';

// Rotating the admin token across instances of one store: the new token and the old one both open admin routes
// while the rollout lasts, and webhook secrets (derived from the signing secret) do not change for customers.
let old: TestGateway;
const rolled: TestGateway[] = [];
let key: string;
const NEW_TOKEN = 'gw-admin-the-new-token-of-32-chars';

const start = async (env: Record<string, string>) => {
  const gateway = await startTestGateway(env, { schema: old.env.GATEWAY_DB_SCHEMA });
  rolled.push(gateway);
  return gateway;
};
const secretAt = async (gateway: TestGateway) =>
  (
    await json(
      await fetch(`${gateway.url}/v1/webhook-secret`, { headers: { authorization: `Bearer ${key}` } }),
    )
  ).secret as string;
const adminStatus = async (gateway: TestGateway, token: string) =>
  (await fetch(`${gateway.url}/admin/accounts`, { headers: { authorization: `Bearer ${token}` } })).status;

beforeAll(async () => {
  old = await startTestGateway();
  key = (await json(await old.admin('/accounts', { name: 'rotation' }))).key;
});
afterAll(async () => {
  for (const gateway of rolled) await gateway.close();
  await old?.close();
});

describe('rotating the admin token', () => {
  it('accepts the previous token during the rollout and keeps webhook secrets with the signing secret', async () => {
    const before = await secretAt(old);
    const during = await start({
      GATEWAY_ADMIN_TOKEN: NEW_TOKEN,
      GATEWAY_ADMIN_TOKEN_PREVIOUS: old.adminToken,
      GATEWAY_SIGNING_SECRET: old.adminToken,
    });
    expect(await adminStatus(during, NEW_TOKEN)).toBe(200);
    expect(await adminStatus(during, old.adminToken)).toBe(200);
    expect(await adminStatus(old, NEW_TOKEN)).toBe(401);
    expect(await secretAt(during)).toBe(before);

    const after = await start({ GATEWAY_ADMIN_TOKEN: NEW_TOKEN, GATEWAY_SIGNING_SECRET: old.adminToken });
    expect(await adminStatus(after, NEW_TOKEN)).toBe(200);
    expect(await adminStatus(after, old.adminToken)).toBe(401);
    expect(await secretAt(after)).toBe(before);
  });

  it('changes every webhook secret when the signing secret is left to follow the token', async () => {
    const before = await secretAt(old);
    const careless = await start({ GATEWAY_ADMIN_TOKEN: NEW_TOKEN });
    expect(await secretAt(careless)).not.toBe(before);
  });
});
