import { describe, expect, it } from 'vitest';
import { type CatalogState, decideSnapshot, evolveCatalog, type SnapshotModel } from './decide.ts';

const m = (id: string, deprecated = false): SnapshotModel => ({
  id,
  provider: id.split('/')[0] ?? '',
  modality: 'text',
  name: id.split('/')[1] ?? '',
  deprecated,
});

const stateAfter = (state: CatalogState, current: SnapshotModel[]): CatalogState =>
  decideSnapshot(state, current).reduce(evolveCatalog, state);

describe('the catalog snapshot decider', () => {
  it('takes a first snapshot that announces nothing', () => {
    const [event] = decideSnapshot(undefined, [m('a/x'), m('a/y', true)]);
    expect(event?.data).toEqual({
      models: [
        { id: 'a/x', deprecated: false },
        { id: 'a/y', deprecated: true },
      ],
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
});
