import type pg from 'pg';
import type { StoredEvent } from '../../events/envelope.ts';
import type { Projection } from '../../projections/types.ts';
import { applyEvents } from '../projections/apply.ts';
import { createTables } from '../projections/tables.ts';

export interface TableDifference {
  table: string;
  /** Rows (live or rebuilt) without an equal row on the other side. */
  count: number;
  sample: { side: 'live' | 'rebuilt'; row: Record<string, unknown> }[];
}

export interface ProjectionComparison {
  tables: number;
  differences: TableDifference[];
  /** Tables left out of a one-account audit because their rows name no account. */
  skipped: string[];
}

const SAMPLE_ROWS_PER_SIDE = 5;

/**
 * Read models folded from zero into `<table>__audit` shadows, to compare with the live tables. The shadows are
 * temporary tables of one session: two audits never collide, and a crash leaves nothing behind.
 */
export class ShadowModels {
  private readonly active = new Set<Projection>();

  constructor(
    private readonly client: pg.PoolClient,
    projections: readonly Projection[],
  ) {
    for (const projection of projections) this.active.add(projection);
  }

  static shadowName(table: string): string {
    return `pg_temp.${table}__audit`;
  }

  private shadows(projection: Projection): Record<string, string> {
    return Object.fromEntries(Object.keys(projection.tables).map((t) => [t, ShadowModels.shadowName(t)]));
  }

  async create(): Promise<void> {
    for (const projection of this.active) {
      await this.dropTables(projection);
      await createTables(this.client, projection, this.shadows(projection));
    }
  }

  /** Folds a run of events, in the log's global order as the live runner does, into every shadow still needed. */
  async apply(events: readonly StoredEvent[]): Promise<void> {
    if (events.length === 0) return;
    for (const projection of this.active)
      await applyEvents(this.client, projection, this.shadows(projection), events);
  }

  /** Rows that differ between the live tables and their shadows; with an account, only that account's rows. */
  async compare(projection: Projection, accountId: string | undefined): Promise<ProjectionComparison> {
    const result: ProjectionComparison = { tables: 0, differences: [], skipped: [] };
    for (const [live, shadow] of Object.entries(this.shadows(projection))) {
      const columns = await this.columns(shadow);
      if (accountId !== undefined && !columns.includes('account_id')) {
        result.skipped.push(live);
        continue;
      }
      result.tables += 1;
      const difference = await this.differ(live, shadow, columns, accountId);
      if (difference.count > 0) result.differences.push(difference);
    }
    return result;
  }

  /** Stops folding into a projection's shadows and drops them. */
  async retire(projection: Projection): Promise<void> {
    this.active.delete(projection);
    await this.dropTables(projection);
  }

  async dropAll(): Promise<void> {
    for (const projection of [...this.active]) await this.retire(projection);
  }

  private async dropTables(projection: Projection): Promise<void> {
    for (const shadow of Object.values(this.shadows(projection)))
      await this.client.query(`DROP TABLE IF EXISTS ${shadow}`);
  }

  private async columns(table: string): Promise<string[]> {
    const { rows } = await this.client.query<{ attname: string }>(
      `SELECT attname FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped
       ORDER BY attnum`,
      [table],
    );
    return rows.map((r) => r.attname);
  }

  /**
   * Both directions of EXCEPT ALL over the shadow's columns (named, so that a live table whose columns were
   * added in another order still compares); jsonb, numeric and timestamptz all compare by value.
   */
  private async differ(
    live: string,
    shadow: string,
    columns: string[],
    accountId: string | undefined,
  ): Promise<TableDifference> {
    const list = columns.map((c) => `"${c}"`).join(', ');
    const filter = accountId === undefined ? '' : 'WHERE account_id = $1';
    const select = (table: string) => `SELECT ${list} FROM ${table} ${filter}`;
    const { rows } = await this.client.query<Record<string, unknown>>(
      `SELECT * FROM (
         SELECT d.*, count(*) OVER () AS audit_differences,
                row_number() OVER (PARTITION BY audit_side) AS audit_rank
         FROM (
           SELECT 'live' AS audit_side, x.* FROM (${select(live)} EXCEPT ALL ${select(shadow)}) x
           UNION ALL
           SELECT 'rebuilt' AS audit_side, y.* FROM (${select(shadow)} EXCEPT ALL ${select(live)}) y
         ) d
       ) r WHERE audit_rank <= ${SAMPLE_ROWS_PER_SIDE} ORDER BY audit_side, audit_rank`,
      accountId === undefined ? [] : [accountId],
    );
    const count = Number(rows[0]?.audit_differences ?? 0);
    const sample = rows.map(({ audit_side, audit_differences: _count, audit_rank: _rank, ...row }) => ({
      side: audit_side === 'live' ? ('live' as const) : ('rebuilt' as const),
      row,
    }));
    return { table: live, count, sample };
  }
}
