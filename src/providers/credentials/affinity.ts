/**
 * Which credential served a conversation lately, by a key the caller makes from its opening (docs/providers.md, Key
 * pools): a provider's prompt cache belongs to the organization of the key that filled it, so a conversation that
 * keeps its credential keeps its cached prefix. In memory, per instance, for `ttlMs` after the last use; the
 * oldest entries give way beyond `max`.
 */
export class CredentialAffinity {
  private readonly recent = new Map<string, { credential: string; until: number }>();

  constructor(
    private readonly ttlMs = 10 * 60_000,
    private readonly max = 50_000,
    private readonly now: () => number = Date.now,
  ) {}

  recall(provider: string, key: string): string | undefined {
    const id = `${provider}\u0000${key}`;
    const found = this.recent.get(id);
    if (!found) return undefined;
    if (found.until <= this.now()) {
      this.recent.delete(id);
      return undefined;
    }
    return found.credential;
  }

  remember(provider: string, key: string, credential: string): void {
    const id = `${provider}\u0000${key}`;
    // Re-inserted so that the map's order is the order of last use, and the oldest is dropped first.
    this.recent.delete(id);
    this.recent.set(id, { credential, until: this.now() + this.ttlMs });
    if (this.recent.size > this.max) {
      const oldest = this.recent.keys().next().value;
      if (oldest !== undefined) this.recent.delete(oldest);
    }
  }
}
