import { describe, expect, it } from 'vitest';
import type { GatewayEvent } from '../../events/index.ts';
import { BatchLineBook } from '../../src/audit/batch-lines.ts';
import { LogBuilder } from './log-builder.ts';

const BATCH = 'batch_0123456789abcdef01234567';
const BUDGET = 'budget-acct_a_202603';

/** Only the fields the check reads; the schemas are another check's business. */
const event = (type: string, data: Record<string, unknown>) => ({ type, data }) as unknown as GatewayEvent;
const settled = (
  line: number,
  charged: bigint,
  {
    discount = 'batch_fee',
    accountId = 'acct_a',
    credential,
  }: { discount?: string; accountId?: string; credential?: string } = {},
) =>
  event('SpendSettled', {
    requestId: `${BATCH}-${line}`,
    accountId,
    holdId: `hold_${line}_${discount}_${accountId}`,
    chargedNanos: charged.toString(),
    charge: { discount, provider: 'openai', ...(credential && { credential }) },
  });
const ownKey = (accountId: string, subAccountId: string | null, name: string) =>
  event('ProviderKeyRegistered', {
    accountId,
    subAccountId,
    providerKeyId: `pk_${name}`,
    provider: 'openai',
    name,
  });
const finished = (line: number, cost: bigint, error: { code: string; message: string } | null = null) =>
  event('BatchLineFinished', {
    batchId: BATCH,
    line,
    requestId: `${BATCH}-${line}`,
    costNanos: cost.toString(),
    error,
  });

function replay(build: (log: LogBuilder) => void): BatchLineBook {
  const log = new LogBuilder();
  log.append(`batch-${BATCH}`, event('BatchCreated', { batchId: BATCH, accountId: 'acct_a' }));
  build(log);
  const book = new BatchLineBook();
  for (const stored of log.events)
    book.apply(stored, { type: stored.type, data: stored.data } as GatewayEvent);
  book.finish();
  return book;
}

const ended = (log: LogBuilder) => log.append(`batch-${BATCH}`, event('BatchCompleted', { batchId: BATCH }));

describe('every charged batch line has its finished line, carrying its charge', () => {
  it('passes lines recorded with what they were charged, overrun included', () => {
    const book = replay((log) => {
      log.append(BUDGET, settled(1, 100n));
      log.append(
        BUDGET,
        event('SpendOverrun', {
          requestId: `${BATCH}-1`,
          holdId: 'hold_1_batch_fee_acct_a',
          overrunNanos: '5',
        }),
      );
      log.append(`batch-${BATCH}`, finished(1, 105n));
      log.append(`batch-${BATCH}`, finished(2, 0n, { code: 'x', message: 'failed upstream' }));
      ended(log);
    });
    expect(book.checked).toBe(1);
    expect(book.findings.kept).toEqual([]);
  });

  it('fails a charged line with no result once the batch has ended, and only notes it while it runs', () => {
    const running = replay((log) => log.append(BUDGET, settled(1, 100n)));
    expect(running.findings.count('failure')).toBe(0);
    expect(running.findings.count('note')).toBe(1);
    const done = replay((log) => {
      log.append(BUDGET, settled(1, 100n));
      ended(log);
    });
    expect(done.findings.kept[0]?.message).toMatch(/charged .* but has no finished line/);
    expect(done.findings.count('failure')).toBe(1);
  });

  it('fails a line whose recorded cost differs from its charges, or that claims a cost never charged', () => {
    const book = replay((log) => {
      log.append(BUDGET, settled(1, 100n));
      log.append(`batch-${BATCH}`, finished(1, 0n, { code: 'result_not_recorded', message: '…' }));
      log.append(`batch-${BATCH}`, finished(2, 7n));
      ended(log);
    });
    expect(book.findings.kept.map((f) => [f.severity, f.message])).toEqual([
      ['failure', expect.stringMatching(/records a cost of \$0.*but was charged/)],
      ['failure', expect.stringMatching(/records a cost of .* that was never charged/)],
    ]);
  });

  it('fails a line that claims a charge that is not its own: another price, or another account', async () => {
    // An earlier version took a client's X-Request-Id as the request's id: a chat sent as `<batch>-3` was charged
    // under the line's id at the standard price, and a resumed take recorded line 3, which never ran, with it.
    const book = replay((log) => {
      log.append(BUDGET, settled(3, 70n, { discount: 'none' }));
      log.append(`batch-${BATCH}`, finished(3, 70n, { code: 'result_lost', message: '…' }));
      log.append('budget-acct_b_202603', settled(4, 90n, { accountId: 'acct_b' }));
      log.append(`batch-${BATCH}`, finished(4, 90n, { code: 'result_lost', message: '…' }));
      ended(log);
    });
    expect(book.findings.kept.map((f) => [f.severity, f.message])).toEqual([
      [
        'failure',
        expect.stringMatching(/batch line .*-3 records a cost of .* that is not its own: .*discount none/),
      ],
      [
        'failure',
        expect.stringMatching(/batch line .*-4 records .* not its own: .*acct_b, not to the batch/),
      ],
    ]);
  });

  it("takes a line's charge of the fee alone on its requester's own key, and no other charge at the fee alone", () => {
    const book = replay((log) => {
      log.append('account-acct_a', ownKey('acct_a', null, 'ours'));
      log.append('account-acct_b', ownKey('acct_b', null, 'theirs'));
      log.append('account-acct_a', ownKey('acct_a', 'sub_x', 'a-customers'));
      log.append(BUDGET, settled(1, 5n, { discount: 'byok', credential: 'byok:ours' }));
      log.append(`batch-${BATCH}`, finished(1, 5n));
      // Not the batch owner's key (another account's; a sub-account's that did not make the batch), or no own key.
      log.append(BUDGET, settled(2, 6n, { discount: 'byok', credential: 'byok:theirs' }));
      log.append(`batch-${BATCH}`, finished(2, 6n));
      log.append(BUDGET, settled(3, 7n, { discount: 'byok', credential: 'byok:a-customers' }));
      log.append(`batch-${BATCH}`, finished(3, 7n));
      log.append(BUDGET, settled(4, 8n, { discount: 'byok', credential: 'default' }));
      log.append(`batch-${BATCH}`, finished(4, 8n));
      ended(log);
    });
    expect(book.checked).toBe(1);
    expect(book.findings.kept.map((f) => [f.severity, f.message])).toEqual([
      [
        'failure',
        expect.stringMatching(
          /-2 records .* not its own: .*byok:theirs, which is no openai key of the batch's owner/,
        ),
      ],
      [
        'failure',
        expect.stringMatching(/-3 records .* not its own: .*byok:a-customers, which is no openai key/),
      ],
      [
        'failure',
        expect.stringMatching(
          /-4 records .* not its own: .*discount byok, but not on an own key \(default\)/,
        ),
      ],
    ]);
  });

  it("warns of a request recorded under a line's id that the line does not claim, and keeps the line's own", async () => {
    const book = replay((log) => {
      log.append(BUDGET, settled(5, 100n));
      log.append(BUDGET, settled(5, 40n, { discount: 'cache' }));
      log.append(`batch-${BATCH}`, finished(5, 100n));
      ended(log);
    });
    expect(book.checked).toBe(1);
    expect(book.findings.kept.map((f) => [f.severity, f.message])).toEqual([
      ['warning', expect.stringMatching(/a request that is not batch line .*-5 .*discount cache/)],
    ]);
  });
});
