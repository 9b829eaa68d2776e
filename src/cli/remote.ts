import type { Config } from '../config.ts';
import { readAdminToken } from '../http/admin-token.ts';

export interface Remote {
  post(path: string, body?: unknown): Promise<unknown>;
  get(path: string): Promise<unknown>;
  patch(path: string, body: unknown): Promise<unknown>;
  delete(path: string): Promise<unknown>;
}

export class RemoteError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`gateway answered ${status}`);
  }
}

/**
 * The running gateway's admin API, when one answers at GATEWAY_URL with our token; undefined when nothing
 * listens there (then the CLI works on the store directly).
 */
export async function findRunningGateway(config: Config): Promise<Remote | undefined> {
  const token = config.adminToken ?? (await readAdminToken(config.dataDir));
  if (!token) return undefined;
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  try {
    const health = await fetch(`${config.gatewayUrl}/admin/health`, {
      headers,
      signal: AbortSignal.timeout(2000),
    });
    if (health.status === 401) throw new RemoteError(401, await health.json().catch(() => ({})));
    if (!health.ok) return undefined;
  } catch (error) {
    if (error instanceof RemoteError) throw error;
    return undefined;
  }
  const call = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown) => {
    const response = await fetch(`${config.gatewayUrl}/admin${path}`, {
      method,
      headers: body === undefined ? { authorization: headers.authorization } : headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const payload = await response.json().catch(() => ({}));
    if (!response.ok) throw new RemoteError(response.status, payload);
    return payload;
  };
  return {
    post: (path, body) => call('POST', path, body),
    get: (path) => call('GET', path),
    patch: (path, body) => call('PATCH', path, body),
    delete: (path) => call('DELETE', path),
  };
}
