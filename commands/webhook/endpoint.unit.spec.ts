import { describe, expect, it } from 'vitest';
import type { AccountEvent } from '../../events/account.ts';
import { decide } from '../account/decide.ts';
import { evolve, initialState } from '../account/state.ts';
import { DomainError } from '../errors.ts';

const opened: AccountEvent = {
  type: 'AccountOpened',
  data: { accountId: 'acct_1', name: 'Acme', rateLimitRpm: 600 },
};
const stateOf = (events: AccountEvent[]) => events.reduce(evolve, initialState());
const set = (url: string | null) => ({ type: 'SetWebhookEndpoint' as const, url });

describe('account webhook endpoint', () => {
  it('records the endpoint, and nothing when it is already the one set', () => {
    const events = decide(set('https://hooks.example.com/a'), stateOf([opened]));
    expect(events).toEqual([
      { type: 'WebhookEndpointSet', data: { accountId: 'acct_1', url: 'https://hooks.example.com/a' } },
    ]);
    expect(decide(set('https://hooks.example.com/a'), stateOf([opened, ...events]))).toEqual([]);
    expect(decide(set(null), stateOf([opened, ...events]))).toEqual([
      { type: 'WebhookEndpointSet', data: { accountId: 'acct_1', url: null } },
    ]);
    expect(decide(set(null), stateOf([opened]))).toEqual([]);
  });

  it('refuses an account that does not exist', () => {
    expect(() => decide(set('https://hooks.example.com/a'), initialState())).toThrow(DomainError);
  });
});
