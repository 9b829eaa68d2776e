import { describe, expect, it } from 'vitest';
import {
  type CatalogState,
  decideSnapshot,
  evolveCatalog,
  type Listing,
  type SnapshotModel,
} from './decide.ts';

const m = (id: string, deprecated = false): SnapshotModel => ({
  id,
  provider: id.split('/')[0] ?? '',
  modality: 'text',
  name: id.split('/')[1] ?? '',
  deprecated,
});

const stateAfter = (state: CatalogState, current: SnapshotModel[], listings: Listing[] = []): CatalogState =>
  decideSnapshot(state, current, listings).reduce(evolveCatalog, state);
const listing = (provider: string, fetchedAt: string, models: string[]): Listing => ({
  provider,
  fetchedAt,
  models,
});
const ids = (notes: { id: string }[] | undefined) => notes?.map((n) => n.id);

describe('the catalog snapshot decider', () => {
  it('takes a first snapshot that announces nothing', () => {
    const [event] = decideSnapshot(undefined, [m('a/x'), m('a/y', true)]);
    expect(event?.data).toEqual({
      models: [
        { id: 'a/x', deprecated: false },
        { id: 'a/y', deprecated: true },
      ],
      listings: [],
      added: [],
      deprecated: [],
    });
  });

  it('records nothing when the catalog is the same', () => {
    const state = stateAfter(undefined, [m('a/x'), m('a/y')]);
    expect(decideSnapshot(state, [m('a/y'), m('a/x')])).toEqual([]);
  });

  it('names models added, newly deprecated and gone (as deprecated), and none already deprecated', () => {
    const state = stateAfter(undefined, [m('a/x'), m('a/y'), m('a/z'), m('a/old', true)]);
    const [event] = decideSnapshot(state, [m('a/x'), m('a/y', true), m('a/new')]);
    expect(event?.data.added).toEqual([{ id: 'a/new', provider: 'a', modality: 'text', name: 'new' }]);
    expect(event?.data.deprecated).toEqual([
      { id: 'a/y', provider: 'a', modality: 'text', name: 'y' },
      { id: 'a/z', provider: 'a', modality: 'unknown', name: 'z' },
    ]);
  });

  it('records a model that came back from deprecation without announcing it', () => {
    const state = stateAfter(undefined, [m('a/x', true)]);
    const [event] = decideSnapshot(state, [m('a/x')]);
    expect(event?.data).toMatchObject({
      added: [],
      deprecated: [],
      models: [{ id: 'a/x', deprecated: false }],
    });
  });

  describe("with the providers' model lists", () => {
    const catalog = [m('a/x'), m('a/y'), m('a/z'), m('a/old', true), m('b/q')];
    const listed = stateAfter(undefined, catalog, [listing('a', '2026-01-01T00:00:00.000Z', ['a/x', 'a/y'])]);

    it('records a provider listed for the first time without announcing anything', () => {
      const state = stateAfter(undefined, catalog);
      const [event] = decideSnapshot(state, catalog, [listing('a', '2026-01-01T00:00:00.000Z', ['a/x'])]);
      expect(event?.data).toMatchObject({ added: [], deprecated: [] });
      expect(event?.data.listings).toEqual([listing('a', '2026-01-01T00:00:00.000Z', ['a/x'])]);
    });

    it('announces models a list newly offers as added and those it no longer offers as deprecated', () => {
      const [event] = decideSnapshot(listed, catalog, [
        listing('a', '2026-01-02T00:00:00.000Z', ['a/x', 'a/z']),
      ]);
      expect(ids(event?.data.added)).toEqual(['a/z']);
      expect(ids(event?.data.deprecated)).toEqual(['a/y']);
      expect(event?.data.added[0]).toEqual({ id: 'a/z', provider: 'a', modality: 'text', name: 'z' });
    });

    it('records nothing for a list fetched again with the same models, or for an older fetch', () => {
      expect(
        decideSnapshot(listed, catalog, [listing('a', '2026-01-05T00:00:00.000Z', ['a/y', 'a/x'])]),
      ).toEqual([]);
      // Another instance's answer from before the recorded one does not undo it.
      expect(decideSnapshot(listed, catalog, [listing('a', '2025-12-31T00:00:00.000Z', ['a/x'])])).toEqual(
        [],
      );
    });

    it('keeps the lists of providers not known now, and says nothing of deprecated models', () => {
      const [event] = decideSnapshot(listed, catalog, [
        listing('a', '2026-01-02T00:00:00.000Z', ['a/x', 'a/y', 'a/old']),
      ]);
      expect(event?.data).toMatchObject({ added: [], deprecated: [] });
      const next = stateAfter(listed, catalog, [listing('b', '2026-01-02T00:00:00.000Z', ['b/q'])]);
      expect([...(next?.listings.keys() ?? [])].sort()).toEqual(['a', 'b']);
    });

    it('announces a model new to the catalog only when its provider’s known list offers it', () => {
      const grown = [...catalog, m('a/new'), m('a/unlisted'), m('c/free')];
      const [event] = decideSnapshot(listed, grown, [
        listing('a', '2026-01-02T00:00:00.000Z', ['a/x', 'a/y', 'a/new']),
      ]);
      expect(ids(event?.data.added)).toEqual(['a/new', 'c/free']);
      expect(event?.data.deprecated).toEqual([]);
    });

    it('reads a snapshot written before lists were recorded as knowing none', () => {
      const old = evolveCatalog(undefined, {
        type: 'CatalogSnapshotTaken',
        data: { models: [{ id: 'a/x', deprecated: false }], added: [], deprecated: [] },
      });
      expect(old?.listings.size).toBe(0);
      const [event] = decideSnapshot(old, [m('a/x')], [listing('a', '2026-01-01T00:00:00.000Z', [])]);
      expect(event?.data).toMatchObject({ added: [], deprecated: [] });
    });
  });
});
