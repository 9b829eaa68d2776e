import { CATALOG_STREAM } from '../../events/catalog.ts';
import { categoryOf } from '../../events/categories.ts';
import { type StoredEvent, streamCategory } from '../../events/envelope.ts';
import { type GatewayEvent, parseEvent } from '../../events/index.ts';
import { reconciliationStream } from '../../events/reconciliation.ts';
import { Findings, where } from './findings.ts';
import { budgetStreamParts } from './scope.ts';

/**
 * Each event against its schema (upcasting older versions as readers do), and against its stream: the type
 * belongs to the stream's category, and the account, month or sub-account it names is the stream's own.
 */
export class SchemaCheck {
  readonly findings = new Findings();
  valid = 0;
  checked = 0;

  parse(stored: StoredEvent): GatewayEvent | undefined {
    this.checked += 1;
    const parsed = parseEvent(stored);
    if (!parsed.ok) {
      this.findings.fail(`${where(stored)}: ${parsed.error}`);
      return undefined;
    }
    const misplaced = this.misplacement(stored, parsed.event);
    if (misplaced) {
      this.findings.fail(`${where(stored)}: ${misplaced}`);
      return undefined;
    }
    this.valid += 1;
    return parsed.event;
  }

  private misplacement(stored: StoredEvent, event: GatewayEvent): string | undefined {
    const category = streamCategory(stored.stream);
    // The category comes from the event catalogue itself (events/categories.ts), so no type can lack one here.
    const expected = categoryOf(event.type);
    if (expected === undefined) return `${event.type} has no stream category in events/categories.ts`;
    if (expected !== category)
      return `${event.type} belongs in a ${expected}- stream, not a ${category}- one`;
    const id = stored.stream.slice(category.length + 1);
    switch (expected) {
      case 'account': {
        const accountId = (event.data as { accountId: string }).accountId;
        return accountId === id ? undefined : `names account ${accountId} inside the stream of ${id}`;
      }
      case 'budget': {
        const parts = budgetStreamParts(stored.stream);
        const data = event.data as { accountId: string; month: string };
        if (!parts) return 'the stream name does not read budget-{account}_{yyyymm}';
        if (data.accountId !== parts.accountId)
          return `names account ${data.accountId} in a stream of ${parts.accountId}`;
        return data.month === parts.month
          ? undefined
          : `names month ${data.month} in the stream of ${parts.month}`;
      }
      case 'subaccount': {
        const subAccountId = (event.data as { subAccountId: string }).subAccountId;
        return subAccountId === id
          ? undefined
          : `names sub-account ${subAccountId} inside the stream of ${id}`;
      }
      case 'webhook': {
        const deliveryId = (event.data as { deliveryId: string }).deliveryId;
        return deliveryId === id ? undefined : `names delivery ${deliveryId} inside the stream of ${id}`;
      }
      case 'webhooksecret': {
        const keyId = (event.data as { keyId: string }).keyId;
        return keyId === id ? undefined : `names key ${keyId} inside the stream of ${id}`;
      }
      case 'replay': {
        const replayId = (event.data as { replayId: string }).replayId;
        return replayId === id ? undefined : `names replay ${replayId} inside the stream of ${id}`;
      }
      case 'cache': {
        const accountId = (event.data as { accountId: string }).accountId;
        return accountId === id ? undefined : `names account ${accountId} inside the stream of ${id}`;
      }
      case 'eval': {
        const evalId = (event.data as { evalId: string }).evalId;
        return evalId === id ? undefined : `names eval ${evalId} inside the stream of ${id}`;
      }
      case 'catalog':
        return stored.stream === CATALOG_STREAM ? undefined : `belongs in ${CATALOG_STREAM}`;
      case 'credential': {
        const provider = (event.data as { provider: string }).provider;
        return provider === id ? undefined : `names provider ${provider} inside the stream of ${id}`;
      }
      case 'reconciliation': {
        const { provider, day } = event.data as { provider: string; day: string };
        const own = reconciliationStream(provider, day);
        return stored.stream === own ? undefined : `belongs in ${own}`;
      }
      // Placed by their category alone: their ids are not compared with the stream's.
      case 'job':
      case 'file':
      case 'batch':
        return undefined;
      default: {
        const _exhaustive: never = expected;
        return `${String(_exhaustive)} is a category this check does not know`;
      }
    }
  }
}
