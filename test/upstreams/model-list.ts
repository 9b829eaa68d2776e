import { buildCatalog } from '../../src/catalog/catalog.ts';
import { callableModelId } from '../../src/catalog/extra-models.ts';
import type { ApiFamily } from '../../src/catalog/types.ts';
import type { Reply } from './harness.ts';
import type { ModelListControl } from './types.ts';

let byFamily: Map<ApiFamily, string[]> | undefined;

/**
 * Every model id the gateway's bundled catalog sends to providers of an API family: what a simulator lists unless a
 * test restricts it, so that a test calling any catalog model of the provider it stands for finds it offered.
 */
export function catalogIds(family: ApiFamily): readonly string[] {
  if (!byFamily) {
    byFamily = new Map();
    for (const model of buildCatalog().all()) {
      const ids = byFamily.get(model.api) ?? [];
      ids.push(model.providerModelId, callableModelId(model));
      byFamily.set(model.api, ids);
    }
    for (const [family, ids] of byFamily) byFamily.set(family, [...new Set(ids)]);
  }
  return byFamily.get(family) ?? [];
}

/**
 * A simulator's model list: what it offers (the catalog's ids of its family by default), a failure to answer with,
 * the largest page it answers, and how often it was asked. List calls are answered outside the script queue and
 * not recorded: the gateway asks at start and on a schedule, which tests of other calls must not see.
 */
export class ModelListState implements ModelListControl {
  private offered: readonly string[] | undefined;
  private failing: number | undefined;
  private largestPage: number | undefined;
  private count = 0;

  constructor(private readonly family: ApiFamily) {}

  offer(ids?: readonly string[]): void {
    this.offered = ids === undefined ? undefined : [...ids];
  }

  fail(status?: number): void {
    this.failing = status;
  }

  pageSize(size?: number): void {
    this.largestPage = size;
  }

  calls(): number {
    return this.count;
  }

  ids(): readonly string[] {
    return this.offered ?? catalogIds(this.family);
  }

  /** The page size a request gets: its own (or the provider's default), at most the provider's and the test's cap. */
  page(asked: number | undefined, fallback: number, max: number): number {
    const size = Math.min(asked ?? fallback, max);
    return this.largestPage === undefined ? size : Math.min(size, this.largestPage);
  }

  /** Counts the call; the scripted failure, else the list. */
  answer(list: () => Reply, failure: (status: number) => Reply): Reply {
    this.count++;
    return this.failing === undefined ? list() : failure(this.failing);
  }
}
