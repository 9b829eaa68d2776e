import type { StoredEvent } from '../../events/envelope.ts';

/**
 * Hand-made logs of money events with deterministic ids and times, so that tables folded from them can be compared
 * across foldings (and across versions of the code). Hashes are not checked by the read models and are left blank.
 */
export class MoneyLog {
  readonly events: StoredEvent[] = [];
  private clock = Date.parse('2026-03-31T23:58:00Z');

  add(type: string, data: Record<string, unknown>, stepMs = 7_000): StoredEvent {
    this.clock += stepMs;
    const n = this.events.length + 1;
    const stored: StoredEvent = {
      id: `00000000-0000-4000-8000-${n.toString().padStart(12, '0')}`,
      type,
      stream: `s-${type}`,
      revision: n,
      position: BigInt(n),
      checkpoint: `1/${n}`,
      occurredAt: new Date(this.clock),
      data,
      metadata: { schemaVersion: 1 },
      hash: '0'.repeat(64),
      prevHash: '0'.repeat(64),
    };
    this.events.push(stored);
    return stored;
  }

  /** The month the clock is in, as the budget stream names it. */
  month(): string {
    return new Date(this.clock).toISOString().slice(0, 7);
  }
}

export interface Spend {
  accountId: string;
  holdId: string;
  chargedNanos: string;
  subAccountId?: string | null;
  tag?: string | null;
  label?: string;
  priceNanos?: string;
  day?: string;
  model?: string;
  units?: number;
  month?: string;
}

export function settled(log: MoneyLog, s: Spend, stepMs?: number): StoredEvent {
  const units = s.units ?? 30;
  return log.add(
    'SpendSettled',
    {
      accountId: s.accountId,
      month: s.month ?? log.month(),
      holdId: s.holdId,
      requestId: `req_${s.holdId}`,
      subAccountId: s.subAccountId ?? null,
      tag: s.tag ?? null,
      ...(s.label === undefined ? {} : { label: s.label }),
      heldNanos: '900000000',
      chargedNanos: s.chargedNanos,
      releasedNanos: (900000000n - BigInt(s.chargedNanos)).toString(),
      charge: {
        model: s.model ?? 'gpt-4o-mini',
        provider: 'openai',
        lines: [
          { item: 'input_tokens', quantity: units - 10, unitPriceNanosPerMillion: '150000000' },
          { item: 'cached_input_tokens', quantity: 3, unitPriceNanosPerMillion: '75000000' },
          { item: 'output_tokens', quantity: 10, unitPriceNanosPerMillion: '600000000' },
        ],
        passThroughNanos: s.chargedNanos,
        feeNanos: '0',
        discount: 'none',
        discountNanos: '0',
        usageReported: true,
        units,
      },
      ...(s.priceNanos === undefined ? {} : { priceNanos: s.priceNanos }),
      ...(s.day === undefined ? {} : { day: s.day }),
    },
    stepMs,
  );
}

export function overrun(
  log: MoneyLog,
  s: Pick<Spend, 'accountId' | 'holdId' | 'subAccountId' | 'tag' | 'priceNanos' | 'model'> & {
    overrunNanos: string;
  },
): StoredEvent {
  return log.add('SpendOverrun', {
    accountId: s.accountId,
    month: log.month(),
    holdId: s.holdId,
    requestId: `req_${s.holdId}`,
    subAccountId: s.subAccountId ?? null,
    tag: s.tag ?? null,
    overrunNanos: s.overrunNanos,
    ...(s.model === undefined ? {} : { model: s.model }),
    ...(s.priceNanos === undefined ? {} : { priceNanos: s.priceNanos }),
  });
}

/**
 * Two accounts across a month's end (and a UTC day's): own keys, tags, a sub-account with its price, labels and
 * renewing-cap days, overruns with and without their model, top-ups, a reversal and adjustments between the charges,
 * a charge of an account whose opening comes later, request records, and stored events delivered twice.
 */
export function mixedLog(): MoneyLog {
  const log = new MoneyLog();
  log.add('AccountOpened', { accountId: 'acct_a', name: 'A', rateLimitRpm: 60 });
  log.add('AccountOpened', { accountId: 'acct_b', name: 'B', rateLimitRpm: 60 });
  log.add('AccountToppedUp', { accountId: 'acct_a', reference: 'pay_1', amountNanos: '50000000000' });
  log.add('AccountToppedUp', { accountId: 'acct_b', reference: 'pay_2', amountNanos: '7000000000' });
  settled(log, { accountId: 'acct_c', holdId: 'h_c0', chargedNanos: '5' });
  let twice: StoredEvent | undefined;
  for (let i = 0; i < 60; i++) {
    const holdId = `h_${i}`;
    const charged = String(1000 + i * 37);
    switch (i % 6) {
      case 0: {
        settled(log, { accountId: 'acct_a', holdId, chargedNanos: charged });
        const record = completed(log, { logId: `log_${i}`, holdId, accountId: 'acct_a', costNanos: charged });
        if (i === 12) log.events.push(record);
        break;
      }
      case 1:
        settled(log, {
          accountId: 'acct_a',
          holdId,
          chargedNanos: charged,
          tag: i % 4 === 1 ? 'eng' : 'ops',
        });
        break;
      case 2:
        settled(log, {
          accountId: 'acct_a',
          holdId,
          chargedNanos: charged,
          subAccountId: 'sub_1',
          tag: 'resold',
          label: i % 4 === 2 ? 'mobile' : undefined,
          priceNanos: String(BigInt(charged) * 2n),
          day: i % 5 === 0 ? '2026-03-31' : undefined,
          model: i % 3 === 0 ? 'gpt-4o' : 'gpt-4o-mini',
        });
        break;
      case 3:
        twice = settled(log, {
          accountId: 'acct_b',
          holdId,
          chargedNanos: charged,
          model: 'claude-3-5-haiku',
        });
        break;
      case 4:
        // An overrun of the charge before it: old ones carry no model and find it in that charge.
        overrun(log, {
          accountId: 'acct_b',
          holdId: `h_${i - 1}`,
          overrunNanos: '11',
          ...(i % 12 === 4 ? {} : { model: 'claude-3-5-haiku' }),
        });
        break;
      default:
        overrun(log, {
          accountId: 'acct_a',
          holdId: `h_${i - 3}`,
          subAccountId: 'sub_1',
          tag: 'resold',
          overrunNanos: '13',
          priceNanos: '26',
        });
    }
    if (i === 20) log.add('BalanceAdjusted', adjustment('adj_1', '-300'));
    if (i === 33) {
      log.add('AccountTopUpReversed', {
        accountId: 'acct_a',
        reference: 'pay_1',
        amountNanos: '1000',
        refundedNanos: '1000',
        refundReference: 're_1',
      });
      log.add('AccountToppedUp', { accountId: 'acct_a', reference: 'pay_3', amountNanos: '999' });
    }
    if (i === 41 && twice) log.events.push(twice);
    if (i === 50) log.add('AccountOpened', { accountId: 'acct_c', name: 'C', rateLimitRpm: 60 });
  }
  log.add('BalanceAdjusted', adjustment('adj_2', '77'));
  return log;

  function adjustment(reference: string, amountNanos: string) {
    return { accountId: 'acct_a', month: log.month(), reference, amountNanos, reason: 'test' };
  }
}

export function completed(
  log: MoneyLog,
  r: { logId: string; holdId: string; accountId: string; costNanos: string },
  stepMs?: number,
): StoredEvent {
  return log.add(
    'RequestCompleted',
    {
      logId: r.logId,
      requestId: `req_${r.holdId}`,
      accountId: r.accountId,
      month: log.month(),
      subAccountId: null,
      keyId: 'key_1',
      tag: null,
      endpoint: '/v1/chat/completions',
      requestedModel: 'gpt-4o-mini',
      model: 'gpt-4o-mini',
      provider: 'openai',
      status: 200,
      errorType: null,
      stream: false,
      usage: { prompt_tokens: 20, completion_tokens: 10 },
      costNanos: r.costNanos,
      holdId: r.holdId,
      firstByteMs: null,
      totalMs: 12,
      attempts: 1,
      fallbacks: 0,
      cacheStatus: null,
      routing: null,
      requestSha256: 'a'.repeat(64),
      responseSha256: 'b'.repeat(64),
      bodiesKept: false,
      at: '2026-04-01T00:00:00.000Z',
    },
    stepMs,
  );
}
