import { createHmac } from 'node:crypto';
import type { WebhookCommands } from '../../commands/webhook/handler.ts';
import type { KeyHolder } from '../accounts/live-state.ts';

export const SECRET_PREFIX = 'whsec_';

export interface WebhookSecret {
  /** The signing secret; receivers key HMAC-SHA256 with this whole string, prefix included. */
  secret: string;
  key_id: string;
  generation: number;
}

/**
 * Per-key signing secrets that are never stored: each is HMAC-SHA256(server secret, "<key id>:<generation>"),
 * where the server secret derives from the operator's admin token (as the media URL secret does) and the
 * generation counts the key's rotations in the log. Every instance sharing the token derives the same secret;
 * a rotation moves the generation, so the old secret stops matching the next signature made anywhere.
 */
export class WebhookSecrets {
  private readonly serverSecret: Buffer;

  constructor(
    adminToken: string,
    private readonly commands: WebhookCommands,
    private readonly clock: () => Date = () => new Date(),
  ) {
    this.serverSecret = createHmac('sha256', adminToken).update('gateway webhook secrets v1').digest();
  }

  private derive(keyId: string, generation: number): string {
    const mac = createHmac('sha256', this.serverSecret).update(`${keyId}:${generation}`).digest('base64url');
    return `${SECRET_PREFIX}${mac}`;
  }

  /** The key's secret as it stands now (read from the log, so a rotation anywhere is seen at once). */
  async current(keyId: string): Promise<WebhookSecret> {
    const generation = await this.commands.generation(keyId);
    return { secret: this.derive(keyId, generation), key_id: keyId, generation };
  }

  async rotate(holder: KeyHolder, correlationId?: string): Promise<WebhookSecret> {
    const { state } = await this.commands.rotate(
      {
        type: 'RotateSecret',
        keyId: holder.keyId,
        accountId: holder.accountId,
        subAccountId: holder.subAccountId,
      },
      this.clock(),
      correlationId,
    );
    return {
      secret: this.derive(holder.keyId, state.generation),
      key_id: holder.keyId,
      generation: state.generation,
    };
  }
}
