import type { CredentialEvent } from '../../events/credential.ts';

/** The last refusal recorded of each credential of the stream's provider. */
export type CredentialRefusals = ReadonlyMap<string, { reason: string; at: number }>;

export interface RecordRefusal {
  provider: string;
  credential: string;
  reason: 'unauthorized' | 'forbidden' | 'quota';
  status: number | null;
  message: string;
  at: Date;
  operatorAccountId: string | null;
}

/**
 * Two instances meet the same refusal each on their own, each in its own time (a quiet instance may use the key
 * much later): a refusal of the same credential for the same reason within this window of the last recorded one
 * is that one again, not news.
 */
export const SAME_REFUSAL_MS = 60 * 60 * 1000;

export function evolveRefusals(state: CredentialRefusals, event: CredentialEvent): CredentialRefusals {
  switch (event.type) {
    case 'ProviderCredentialRefused': {
      const next = new Map(state);
      next.set(event.data.credential, { reason: event.data.reason, at: Date.parse(event.data.at) });
      return next;
    }
    // The operator's additions and removals are decided by their own decider (operator.ts).
    case 'ProviderCredentialAdded':
    case 'ProviderCredentialChanged':
    case 'ProviderCredentialRemoved':
      return state;
    default: {
      const _exhaustive: never = event;
      return state;
    }
  }
}

export function decideRefusal(command: RecordRefusal, state: CredentialRefusals): CredentialEvent[] {
  const last = state.get(command.credential);
  const at = command.at.getTime();
  if (last && last.reason === command.reason && Math.abs(at - last.at) < SAME_REFUSAL_MS) return [];
  return [
    {
      type: 'ProviderCredentialRefused',
      data: {
        provider: command.provider,
        credential: command.credential,
        reason: command.reason,
        status: command.status,
        message: command.message,
        at: command.at.toISOString(),
        operatorAccountId: command.operatorAccountId,
      },
    },
  ];
}
