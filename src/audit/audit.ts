import type pg from 'pg';
import { DomainError } from '../../commands/errors.ts';
import { type StoredEvent, streamCategory } from '../../events/envelope.ts';
import type { GatewayEvent } from '../../events/index.ts';
import { logicalEvents } from '../../events/logical.ts';
import type { EventStore } from '../../events/store.ts';
import { projections } from '../../projections/index.ts';
import { statementTotals } from '../../projections/statements/index.ts';
import type { Projection } from '../../projections/types.ts';
import { catchUp } from '../projections/runner.ts';
import { BatchLineBook } from './batch-lines.ts';
import { CapReplay } from './caps.ts';
import { type CheckResult, Findings } from './findings.ts';
import { HoldBook } from './holds.ts';
import { balanceRows, LedgerSums } from './ledger.ts';
import { LogCursor } from './log-cursor.ts';
import { MonthBook } from './months.ts';
import { PricingCheck } from './pricing.ts';
import { formatReport } from './report.ts';
import { saveAuditReport } from './reports.ts';
import { ResaleCheck } from './resale.ts';
import { SchemaCheck } from './schema-check.ts';
import { accountOf, scopeOf } from './scope.ts';
import { StreamSequencer } from './sequencer.ts';
import { ShadowModels } from './shadow.ts';
import { StatementSums } from './statements.ts';
import { checkStreamHeads } from './stream-heads.ts';

export interface AuditOptions {
  accountId?: string;
  now?: Date;
}

export interface AuditOutcome {
  ok: boolean;
  checks: CheckResult[];
  report: string;
}

interface Item {
  stored: StoredEvent;
  event: GatewayEvent | undefined;
}

/**
 * Verifies the gateway from its log alone, reading it once in global order. Integrity (revisions, ids, schemas,
 * hash chains) is checked on arrival; the ledger (holds, caps, months, prices) is replayed in each stream's
 * revision order; each read model is folded from zero into shadow tables and compared with the live tables at
 * the very checkpoint they stand at, which the audit holds still by taking the checkpoint's row lock, as a
 * rebuild's swap does. Safe beside a running gateway: its projector waits a moment per projection.
 */
export async function runAudit(
  pool: pg.Pool,
  store: EventStore,
  options: AuditOptions = {},
): Promise<AuditOutcome> {
  const now = options.now ?? new Date();
  const scope = scopeOf(options.accountId);
  const schema = new SchemaCheck();
  const holds = new HoldBook();
  const caps = new CapReplay();
  const months = new MonthBook();
  const pricing = new PricingCheck();
  const ledger = new LedgerSums();
  const batchLines = new BatchLineBook();
  const resale = new ResaleCheck();
  const statements = new StatementSums();
  const sequencer = new StreamSequencer<Item>(({ stored, event }) => {
    if (!event) return;
    // A stored settlement may stand for its hold and its request's record too: each check folds every part.
    for (const part of logicalEvents(event)) {
      holds.apply(stored, part);
      caps.apply(stored, part);
      months.apply(stored, part);
      pricing.apply(stored, part);
      resale.apply(stored, part);
    }
  });

  const client = await pool.connect();
  const shadows = new ShadowModels(client, projections);
  try {
    await shadows.create();
    const cursor = new LogCursor(store, async (page) => {
      const mine = page.filter((stored) => scope.includes(stored));
      for (const stored of mine) {
        const event = schema.parse(stored);
        sequencer.accept({ stored, event });
        for (const part of event ? logicalEvents(event) : []) {
          ledger.apply(stored, part);
          batchLines.apply(stored, part);
          statements.apply(stored, part);
        }
      }
      await shadows.apply(mine);
    });
    await cursor.advance();
    if (options.accountId !== undefined && sequencer.events === 0)
      throw new DomainError('not_found', `account ${options.accountId} has no events in the log`, 'account');

    const readModels = new Findings();
    let tablesCompared = 0;
    for (const projection of projections) {
      tablesCompared += await compareProjection(pool, store, client, projection, {
        cursor,
        shadows,
        accountId: options.accountId,
        findings: readModels,
        // The balances rows are read under the same lock, at the same point of the log as the sums.
        whileLocked:
          projection.name === 'balances'
            ? async () => ledger.compare(await balanceRows(client, options.accountId))
            : projection.name === 'statements'
              ? async () =>
                  statements.compare(await statementTotals(client, options.accountId), options.accountId)
              : undefined,
      });
    }

    sequencer.finish();
    const { open, total, openLeases } = holds.finish(now);
    pricing.finish();
    batchLines.finish();
    const heads = sequencer.heads();
    const inScope = (stream: string) =>
      scope.accountId === undefined ||
      heads.has(stream) ||
      (streamCategory(stream) !== 'subaccount' && accountOf({ stream, data: undefined }) === scope.accountId);
    const headsChecked =
      store.kind === 'postgres'
        ? await checkStreamHeads(pool, store, heads, inScope, sequencer.revisions)
        : undefined;

    const streams = sequencer.streamCount;
    const checks: CheckResult[] = [
      {
        title: 'revisions',
        summary: `${streams} streams, ${sequencer.events} events checked for contiguous revisions from 0 and unique ids${
          headsChecked === undefined ? '' : `; ${headsChecked} stream heads held against the store's record`
        }`,
        findings: sequencer.revisions,
      },
      {
        title: 'schemas',
        summary: `${schema.valid} of ${schema.checked} events valid, each in its own stream`,
        findings: schema.findings,
      },
      {
        title: 'hash chains',
        summary: `${streams - sequencer.brokenStreamCount} of ${streams} streams intact`,
        findings: sequencer.chains,
      },
      {
        title: 'read models',
        summary: `${tablesCompared} tables of ${projections.length} projections compared with a rebuild from zero at their checkpoints`,
        findings: readModels,
      },
      {
        title: 'holds',
        summary:
          `${total} holds: ${holds.settled} settled, ${holds.released} released, ${open} open` +
          (holds.leases > 0
            ? `; ${holds.leases} spend leases (${openLeases} open), ${holds.carved} holds carved from them`
            : ''),
        findings: holds.findings,
      },
      {
        title: 'caps',
        summary: `${caps.reservations} reservations checked against balance and tag caps, ${caps.subAccountCaps.reservations} against sub-account caps (in their price, for life or per period); ${caps.overruns} overruns`,
        findings: caps.findings,
      },
      {
        title: 'balances',
        summary: `${ledger.compared} balances rows checked: balance = top-ups + adjustments − charges, as the log adds up${
          ledger.adjustments > 0 ? `; ${ledger.adjustments} adjustments` : ''
        }`,
        findings: ledger.findings,
      },
      {
        title: 'months',
        summary: `${months.opened} budget month openings checked for exact carry-over`,
        findings: months.findings,
      },
      {
        title: 'pricing',
        summary: `${pricing.priced} charges re-priced from their recorded lines`,
        findings: pricing.findings,
      },
      {
        title: 'resale',
        summary: `${resale.priced} sub-account charges re-priced from their price books: price − cost = margin`,
        findings: resale.findings,
      },
      {
        title: 'statements',
        summary: `${statements.compared} sub-account statements (per month) held against their charges in the log`,
        findings: statements.findings,
      },
      {
        title: 'batch lines',
        summary: `${batchLines.checked} charged batch lines checked for a recorded result carrying their charge`,
        findings: batchLines.findings,
      },
    ];
    const ok = checks.every((c) => c.findings.count('failure') === 0);
    const scopeName = options.accountId === undefined ? 'all accounts' : `account ${options.accountId}`;
    const report = formatReport(checks, { scope: scopeName, now, head: cursor.head });
    // The operator's dashboard shows the latest report; an audit that cannot keep it still reports.
    await saveAuditReport(pool, { at: now, scope: scopeName, ok, report }).catch(() => undefined);
    return { ok, checks, report };
  } finally {
    await shadows.dropAll().catch(() => undefined);
    client.release();
  }
}

interface CompareContext {
  cursor: LogCursor;
  shadows: ShadowModels;
  accountId: string | undefined;
  findings: Findings;
  whileLocked: (() => Promise<void>) | undefined;
}

/** Compares one projection at its own checkpoint; returns how many tables it compared. */
async function compareProjection(
  pool: pg.Pool,
  store: EventStore,
  client: pg.PoolClient,
  projection: Projection,
  { cursor, shadows, accountId, findings, whileLocked }: CompareContext,
): Promise<number> {
  // Brings the live tables to the head the audit has read (a running gateway's projector does so too, safely).
  await catchUp(pool, store, [projection]);
  await client.query('BEGIN');
  try {
    const { rows } = await client.query<{ checkpoint: string }>(
      'SELECT checkpoint FROM projection_checkpoints WHERE name = $1 FOR UPDATE',
      [projection.name],
    );
    const at = rows[0]?.checkpoint ?? '';
    if (!cursor.reached(at)) await cursor.advance(at);
    if (store.compareCheckpoints(cursor.head, at) !== 0) {
      findings.fail(
        `${projection.name}: stands at ${at || 'the start'}, behind the log read to ${cursor.head}; not compared`,
      );
      await client.query('COMMIT');
      return 0;
    }
    const comparison = await shadows.compare(projection, accountId);
    for (const { table, count, sample } of comparison.differences) {
      const rows = sample.map(
        ({ side, row }) => `\n  only ${side === 'live' ? 'live:   ' : 'rebuilt:'} ${JSON.stringify(row)}`,
      );
      findings.fail(`${table}: ${count} rows differ from a rebuild from zero${rows.join('')}`);
    }
    if (comparison.skipped.length > 0)
      findings.note(`${comparison.skipped.join(', ')}: rows name no account; compared only in a full audit`);
    await whileLocked?.();
    await client.query('COMMIT');
    return comparison.tables;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    await shadows.retire(projection);
  }
}
