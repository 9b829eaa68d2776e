import { createHash } from 'node:crypto';

/** How long a conversation keeps its model after its last routed turn. */
export const STAY_MS = 30 * 60 * 1000;
/** Conversations remembered at once; the least recently routed one is forgotten first. */
const REMEMBERED = 50_000;

interface MessageLike {
  role: string;
  content?: unknown;
}

const text = (content: unknown) => (typeof content === 'string' ? content : JSON.stringify(content ?? null));

/** What a routing decision was asked: a turn that asks another question of the router is decided afresh. */
export interface DecisionAsked {
  requested: string;
  strategy: string;
  baselineModel?: string;
}

/**
 * A conversation is known by its account, its system prompt and its first user message: every turn of it repeats
 * them, and a provider's prompt cache holds exactly that prefix. The routing question (the alias, the strategy
 * and the baseline) is part of it: a turn sent with `x-routing: quality` after a `cost` one, or with another
 * `baseline_model`, asks for another decision and must not inherit the earlier one's model.
 */
export function conversationKey(
  accountId: string,
  messages: readonly MessageLike[],
  asked: DecisionAsked,
): string | undefined {
  const firstUser = messages.find((m) => m.role === 'user');
  if (!firstUser) return undefined;
  const system = messages
    .filter((m) => m.role === 'system' || m.role === 'developer')
    .map((m) => text(m.content))
    .join('\n');
  const question = JSON.stringify([asked.requested, asked.strategy, asked.baselineModel ?? null]);
  return createHash('sha256')
    .update(`${accountId}\u0000${question}\u0000${system}\u0000${text(firstUser.content)}`)
    .digest('base64url');
}

/** Which model each recent conversation was routed to, in this process; entries expire STAY_MS after their use. */
export class Conversations {
  private readonly models = new Map<string, { model: string; at: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  modelOf(key: string): string | undefined {
    const entry = this.models.get(key);
    if (!entry) return undefined;
    if (this.now() - entry.at > STAY_MS) {
      this.models.delete(key);
      return undefined;
    }
    return entry.model;
  }

  remember(key: string, model: string): void {
    // Re-inserted so that the map's order is the order of last use.
    this.models.delete(key);
    this.models.set(key, { model, at: this.now() });
    if (this.models.size > REMEMBERED) {
      const oldest = this.models.keys().next().value;
      if (oldest !== undefined) this.models.delete(oldest);
    }
  }
}
