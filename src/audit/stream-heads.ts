import type pg from 'pg';
import type { EventStore } from '../../events/store.ts';
import type { Findings } from './findings.ts';
import type { StreamHead } from './sequencer.ts';

/**
 * The PostgreSQL store records each stream's last revision and hash beside the log (appends lock and advance
 * it). Held against the log, it shows what revisions and chains cannot: events deleted from a stream's end.
 * Events appended while the audit ran are found by reading on and are not findings.
 */
export async function checkStreamHeads(
  pool: pg.Pool,
  store: EventStore,
  seen: ReadonlyMap<string, StreamHead>,
  inScope: (stream: string) => boolean,
  findings: Findings,
): Promise<number> {
  const { rows } = await pool.query<{ stream: string; revision: string; hash: string }>(
    'SELECT stream, revision::text, hash FROM streams ORDER BY stream',
  );
  const recorded = new Set<string>();
  let checked = 0;
  for (const row of rows) {
    if (!inScope(row.stream)) continue;
    recorded.add(row.stream);
    const revision = Number(row.revision);
    const head = seen.get(row.stream);
    if (!head) {
      if (revision >= 0)
        findings.fail(`${row.stream}: the store records revision ${revision}, the log holds none of it`);
      continue;
    }
    checked += 1;
    if (revision === head.revision) {
      if (row.hash !== head.hash)
        findings.fail(`${row.stream}: the store's head hash differs from its last event's`);
    } else if (revision < head.revision) {
      findings.fail(
        `${row.stream}: the store records revision ${revision}, behind the log's ${head.revision}`,
      );
    } else {
      const [last] = await store.readStream(row.stream, { fromRevision: revision, maxCount: 1 });
      if (last?.revision !== revision) {
        findings.fail(
          `${row.stream}: the store records revision ${revision}, the log ends at ${head.revision} (events removed from its end)`,
        );
      }
    }
  }
  for (const stream of seen.keys()) {
    if (!recorded.has(stream)) findings.fail(`${stream}: in the log but not in the store's stream table`);
  }
  return checked;
}
