import { describe, expect, it } from 'vitest';
import { googleRetryDelayMs } from '../../src/providers/gemini/retry-info.ts';

const body = (details: unknown[]) =>
  JSON.stringify({ error: { code: 429, message: 'quota', status: 'RESOURCE_EXHAUSTED', details } });

describe('Google RetryInfo in a 429 body', () => {
  it('reads the retryDelay of the RetryInfo detail, among others', () => {
    const text = body([
      { '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [] },
      { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '7s' },
    ]);
    expect(googleRetryDelayMs(text)).toBe(7000);
  });

  it('reads fractional seconds', () => {
    expect(
      googleRetryDelayMs(body([{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1.5s' }])),
    ).toBe(1500);
  });

  it.each([
    ['no details', body([])],
    ['no RetryInfo', body([{ '@type': 'type.googleapis.com/google.rpc.Help', links: [] }])],
    [
      'a malformed delay',
      body([{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: 'soon' }]),
    ],
    ['not JSON', '<html>Too Many Requests</html>'],
    ['JSON null', 'null'],
  ])('gives no delay for %s', (_case, text) => {
    expect(googleRetryDelayMs(text)).toBeUndefined();
  });
});
