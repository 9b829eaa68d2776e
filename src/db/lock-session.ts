import type pg from 'pg';

/**
 * PostgreSQL advisory locks held on one session, however many: for background work that holds many locks at once
 * and for long (a gateway working several batches), where a connection per lock would take the pool from the
 * requests. The connection is checked out while any lock is held and given back when none is. As with
 * `withAdvisoryLock`, the locks go with the session: a gateway that dies lets go of all of them, and one whose
 * connection breaks is told (`report`) and takes its next locks on a fresh one.
 */
export class AdvisoryLockSession {
  private client: pg.PoolClient | undefined;
  private lost: ((error: Error) => void) | undefined;
  /** Each lock with the connection it was taken on: one taken on a connection since lost is not unlocked. */
  private readonly held = new Map<string, pg.PoolClient>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly pool: pg.Pool,
    private readonly report: (message: string, error?: unknown) => void,
  ) {}

  /** Takes the lock on `name`; false when another session holds it (or this one does already). */
  tryLock(name: string): Promise<boolean> {
    return this.serially(() => this.lock(name));
  }

  /** Lets the lock go; the connection goes back to the pool once no lock is held on it. */
  unlock(name: string): Promise<void> {
    return this.serially(() => this.release(name));
  }

  /** One statement at a time on the one connection, and no check-out or give-back between them. */
  private serially<T>(step: () => Promise<T>): Promise<T> {
    const next = this.queue.then(step);
    this.queue = next.catch(() => {});
    return next;
  }

  private async lock(name: string): Promise<boolean> {
    if (this.held.has(name)) return false;
    const client = await this.connection();
    const { rows } = await client
      .query<{ held: boolean }>(
        `SELECT pg_try_advisory_lock(hashtext(current_schema() || '.' || $1)) AS held`,
        [name],
      )
      .catch((error: Error) => {
        this.retire(client, error);
        throw error;
      });
    if (rows[0]?.held) this.held.set(name, client);
    else this.giveBackIfIdle();
    return rows[0]?.held === true;
  }

  private async release(name: string): Promise<void> {
    const client = this.held.get(name);
    this.held.delete(name);
    if (client !== undefined && client === this.client) {
      await client
        .query(`SELECT pg_advisory_unlock(hashtext(current_schema() || '.' || $1))`, [name])
        .catch((error: Error) => {
          this.report(`lock ${name}: unlocking failed`, error);
          this.retire(client, error);
        });
    }
    this.giveBackIfIdle();
  }

  private async connection(): Promise<pg.PoolClient> {
    if (this.client) return this.client;
    const client = await this.pool.connect();
    // The database going away must not end the process: the works' next queries fail instead.
    const lost = (error: Error) => {
      this.report('advisory lock session lost', error);
      this.retire(client, error);
    };
    client.on('error', lost);
    this.client = client;
    this.lost = lost;
    return client;
  }

  /** Closes a broken connection (every lock on it is gone with it) rather than give it back to the pool. */
  private retire(client: pg.PoolClient, error: Error): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.release(error);
  }

  private giveBackIfIdle(): void {
    const client = this.client;
    if (!client || [...this.held.values()].includes(client)) return;
    this.client = undefined;
    if (this.lost) client.removeListener('error', this.lost);
    client.release();
  }
}
