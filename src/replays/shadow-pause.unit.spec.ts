import { describe, expect, it } from 'vitest';
import type { ReplayCommand } from '../../commands/replay/decide.ts';
import type { ReplayCommands } from '../../commands/replay/handler.ts';
import type { GatewayEvent } from '../../events/index.ts';
import { RequestRefused } from '../contracts/errors.ts';
import { ShadowPauses, type ShadowPayer } from './shadow-pause.ts';

const payer: ShadowPayer = {
  replayId: 'rpl_1',
  accountId: 'acct_1',
  subAccountId: 'sa_1',
  requestId: 'req_0',
};
const shadows = new Map([[payer.replayId, payer]]);
const at = (seconds: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, seconds));

function world() {
  const sent: ReplayCommand[] = [];
  const commands = {
    handle: async (_replayId: string, command: ReplayCommand) => {
      sent.push(command);
      return { events: [{}], state: {} };
    },
  } as unknown as ReplayCommands;
  const reported: string[] = [];
  const pauses = new ShadowPauses({ commands, clock: () => at(0), report: (line) => reported.push(line) });
  return { pauses, sent, reported };
}

const paused = (triedAt: Date): GatewayEvent => ({
  type: 'ShadowPaused',
  data: {
    replayId: 'rpl_1',
    pause: 1,
    reason: 'budget_exceeded',
    message: 'Spend cap reached',
    sourceRequestId: 'req_9',
    triedAt: triedAt.toISOString(),
  },
});
const capSet = (subAccountId: string): GatewayEvent => ({
  type: 'SubAccountUpdated',
  data: { subAccountId, accountId: 'acct_1', spendCapNanos: '100' },
});

describe('shadow pauses', () => {
  it('pauses for a refusal for money only, and says so once per pause', async () => {
    const { pauses, sent, reported } = world();
    const refused = new RequestRefused('budget_exceeded', 'Spend cap reached');
    expect(await pauses.failed(payer, 'req_9', at(5), refused)).toBe(true);
    expect(sent).toEqual([
      {
        type: 'PauseShadow',
        refusal: {
          reason: 'budget_exceeded',
          message: 'Spend cap reached',
          sourceRequestId: 'req_9',
          triedAt: at(5).toISOString(),
        },
      },
    ]);
    expect(reported).toHaveLength(1);
    expect(await pauses.failed(payer, 'req_9', at(5), new RequestRefused('upstream_failed', 'x'))).toBe(
      false,
    );
  });

  it("resumes at the payer's next money event, not at another payer's", async () => {
    const { pauses, sent } = world();
    pauses.follow(paused(at(10)), at(11), shadows);
    expect(pauses.isPaused('rpl_1')).toBe(true);
    pauses.follow(capSet('sa_other'), at(12), shadows);
    pauses.follow(
      { type: 'TagBudgetSet', data: { accountId: 'acct_2', tag: 't', capNanos: '1' } },
      at(12),
      shadows,
    );
    await pauses.settled();
    expect(sent).toEqual([]);
    pauses.follow(capSet('sa_1'), at(13), shadows);
    await pauses.settled();
    expect(sent).toEqual([{ type: 'ResumeShadow', pause: 1, reason: 'cap_changed' }]);
    pauses.follow(
      { type: 'ShadowResumed', data: { replayId: 'rpl_1', pause: 1, reason: 'cap_changed' } },
      at(14),
      shadows,
    );
    expect(pauses.isPaused('rpl_1')).toBe(false);
  });

  it('resumes at once a pause whose refused comparison money came back during, and not before', async () => {
    const before = world();
    before.pauses.follow(capSet('sa_1'), at(9), shadows);
    before.pauses.follow(paused(at(10)), at(11), shadows);
    await before.pauses.settled();
    expect(before.sent).toEqual([]);

    const during = world();
    during.pauses.follow(
      { type: 'AccountToppedUp', data: { accountId: 'acct_1', reference: 'r', amountNanos: '1' } },
      at(10),
      shadows,
    );
    during.pauses.follow(paused(at(10)), at(11), shadows);
    await during.pauses.settled();
    expect(during.sent).toEqual([{ type: 'ResumeShadow', pause: 1, reason: 'topped_up' }]);
  });
});
