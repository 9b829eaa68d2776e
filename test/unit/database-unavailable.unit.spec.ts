import { describe, expect, it } from 'vitest';
import { describeError } from '../../src/http/errors.ts';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('errors of a database that cannot be reached', () => {
  it.each([
    ['a refused connection', withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['a reset connection', withCode('ECONNRESET')],
    ['a backend terminated (postmaster died, administrator)', withCode('57P01')],
    ['another backend crashed', withCode('57P02')],
    ['a server starting up or in recovery', withCode('57P03', 'the database system is starting up')],
    ['a connection exception', withCode('08006')],
    ['a connection cut under a query', new Error('Connection terminated unexpectedly')],
    ['no connection within the pool timeout', new Error('timeout exceeded when trying to connect')],
  ])('%s is a 503 with Retry-After in the API shape', (_, error) => {
    const described = describeError(error);
    expect(described.status).toBe(503);
    expect(described.headers).toEqual({ 'retry-after': '2' });
    expect(described.body.error).toMatchObject({ type: 'api_error', code: 503 });
  });

  it.each([
    ['a unique violation', withCode('23505')],
    [
      "a provider's refused connection (a fetch failure caused by it)",
      new TypeError('fetch failed', { cause: withCode('ECONNREFUSED') }),
    ],
    ['any other failure', new Error('boom')],
  ])('%s stays a 500', (_, error) => {
    expect(describeError(error).status).toBe(500);
  });
});
