import { describe, expect, it } from 'vitest';
import { type StoredEvent, verifyChain } from '../../events/envelope.ts';
import { StreamSequencer } from '../../src/audit/sequencer.ts';
import { LogBuilder } from './log-builder.ts';

function honestLog(): LogBuilder {
  const log = new LogBuilder();
  for (let i = 0; i < 5; i++) {
    log.append('account-acct_a', {
      type: 'AccountToppedUp',
      data: { accountId: 'acct_a', reference: `pay_${i}`, amountNanos: '100' },
    });
    log.append('account-acct_b', {
      type: 'AccountToppedUp',
      data: { accountId: 'acct_b', reference: `pay_${i}`, amountNanos: '100' },
    });
  }
  return log;
}

function sequence(events: readonly StoredEvent[]) {
  const released: StoredEvent[] = [];
  const sequencer = new StreamSequencer<{ stored: StoredEvent }>(({ stored }) => released.push(stored));
  for (const stored of events) sequencer.accept({ stored });
  sequencer.finish();
  const messages = (f: typeof sequencer.chains) => f.kept.map((x) => x.message);
  return {
    released,
    revisions: messages(sequencer.revisions),
    chains: messages(sequencer.chains),
    sequencer,
  };
}

describe('revisions and hash chains, event by event', () => {
  it('finds nothing in an honest log, as verifyChain does', () => {
    const log = honestLog();
    const result = sequence(log.events);
    expect(result.revisions).toEqual([]);
    expect(result.chains).toEqual([]);
    expect(verifyChain(log.events.filter((e) => e.stream === 'account-acct_a'))).toEqual([]);
    expect(result.released).toHaveLength(10);
  });

  it('names the edited event by its content hash, where verifyChain breaks too', () => {
    const log = honestLog();
    const edited = log.events.map((e) =>
      e.stream === 'account-acct_a' && e.revision === 2
        ? { ...e, data: { ...(e.data as object), amountNanos: '999' } }
        : e,
    );
    expect(verifyChain(edited.filter((e) => e.stream === 'account-acct_a'))).not.toEqual([]);
    const result = sequence(edited);
    expect(result.chains).toEqual([expect.stringMatching(/^account-acct_a@2: content hash mismatch/)]);
    expect(result.revisions).toEqual([]);
    expect(result.sequencer.brokenStreamCount).toBe(1);
  });

  it('names a deleted event as a missing revision and a broken link', () => {
    const log = honestLog();
    const result = sequence(log.events.filter((e) => !(e.stream === 'account-acct_b' && e.revision === 1)));
    expect(result.revisions).toEqual(['account-acct_b: revision 1 missing (the stream goes on at 2)']);
    expect(result.chains).toEqual([expect.stringMatching(/^account-acct_b@2: previous hash does not match/)]);
  });

  it('waits for a revision the global order delivers late, and flags ids and revisions stored twice', () => {
    const log = honestLog();
    const [first, second, ...rest] = log.events.filter((e) => e.stream === 'account-acct_a');
    const swapped = sequence([second as StoredEvent, first as StoredEvent, ...rest]);
    expect(swapped.revisions).toEqual([]);
    expect(swapped.released.map((e) => e.revision)).toEqual([0, 1, 2, 3, 4]);
    const twice = sequence([...log.events, log.events[3] as StoredEvent]);
    expect(twice.revisions).toEqual([
      expect.stringContaining('is stored twice'),
      expect.stringContaining('revision 1 is stored twice'),
    ]);
  });
});
