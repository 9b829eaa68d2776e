import type pg from 'pg';
import { SecretBox } from './secret-box.ts';

export interface Resealed {
  reencrypted: number;
  unreadable: number;
  total: number;
}

/**
 * Seals again, under the box's current key, every `sealed` value of `table` sealed under another (a previous key
 * still opens it); one row at a time, each changed only if no one changed it meanwhile. Secrets no key of the box
 * opens are counted and left as they are.
 */
export async function resealTable(
  sql: pg.Pool,
  box: SecretBox,
  table: 'provider_keys' | 'provider_credentials',
  keyColumns: readonly string[],
): Promise<Resealed> {
  const keys = keyColumns.join(', ');
  const { rows } = await sql.query<Record<string, string>>(`SELECT ${keys}, sealed FROM ${table}`);
  let reencrypted = 0;
  let unreadable = 0;
  for (const row of rows) {
    const sealed = row.sealed as string;
    if (SecretBox.keyIdOf(sealed) === box.currentKeyId) continue;
    let plain: string;
    try {
      plain = box.open(sealed);
    } catch {
      unreadable++;
      continue;
    }
    const where = keyColumns.map((column, i) => `${column} = $${i + 3}`).join(' AND ');
    const { rowCount } = await sql.query(`UPDATE ${table} SET sealed = $1 WHERE sealed = $2 AND ${where}`, [
      box.seal(plain),
      sealed,
      ...keyColumns.map((column) => row[column]),
    ]);
    reencrypted += rowCount ?? 0;
  }
  return { reencrypted, unreadable, total: rows.length };
}
