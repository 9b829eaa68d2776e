import type { WebhookSecretEvent } from '../../events/webhook.ts';

/** A key's signing secret is derived from its id and this generation; 0 until the first rotation. */
export interface SecretState {
  generation: number;
}

export const initialSecretState = (): SecretState => ({ generation: 0 });

export function evolveSecret(state: SecretState, event: WebhookSecretEvent): SecretState {
  switch (event.type) {
    case 'WebhookSecretRotated':
      return { generation: Math.max(state.generation, event.data.generation) };
    default: {
      const _exhaustive: never = event.type;
      return _exhaustive;
    }
  }
}

export interface RotateSecret {
  type: 'RotateSecret';
  keyId: string;
  accountId: string;
  subAccountId: string | null;
}

/** Every rotation is a new generation: the previous secret stops verifying with the next signature made. */
export function decideSecret(command: RotateSecret, state: SecretState): WebhookSecretEvent[] {
  return [
    {
      type: 'WebhookSecretRotated',
      data: {
        keyId: command.keyId,
        accountId: command.accountId,
        subAccountId: command.subAccountId,
        generation: state.generation + 1,
      },
    },
  ];
}
