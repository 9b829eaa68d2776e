import { CredentialCommands } from '../../commands/credential/handler.ts';
import type { EventStore } from '../../events/store.ts';
import type { CredentialPools } from '../providers/credentials/pool.ts';

/**
 * Records each credential the providers refuse (once across instances, commands/credential), which the webhook
 * read model turns into `provider.credential.out` for the operator's account alone: a customer's endpoint never
 * hears of the operator's keys. Without an operator account the refusal is recorded and goes nowhere.
 */
export function recordCredentialRefusals(
  pools: CredentialPools,
  store: EventStore,
  operatorAccountId: string | undefined,
  log: (line: string) => void,
): void {
  const commands = new CredentialCommands(store);
  pools.onOut((out) => {
    commands
      .recordRefusal({
        provider: out.provider,
        credential: out.credential,
        reason: out.reason,
        status: out.status,
        message: out.message,
        at: out.at,
        operatorAccountId: operatorAccountId ?? null,
      })
      .then((decision) => {
        if (decision.events.length === 0)
          log(
            `the refusal of ${out.provider}/${out.credential} was already recorded (another instance, or within the hour)`,
          );
      })
      .catch((error: unknown) =>
        log(`could not record the refusal of ${out.provider}/${out.credential}: ${(error as Error).message}`),
      );
  });
}
