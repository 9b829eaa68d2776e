import { QUALITY_PRIOR } from '../catalog/quality.ts';

/** Quality scores by model id for one account, and what they come from (`prior`, or e.g. `eval:<id>`). */
export interface QualityScores {
  scores: ReadonlyMap<string, number>;
  source: string;
}

/**
 * Where the router's quality figures come from: the seam through which an account's own completed evals
 * override the public prior. Only the order among the candidates matters (the router rescales the scores of the
 * candidates to 0..1), but the scores of one set must share one scale, so sets are never mixed. A model with no
 * score in the set the router takes is not routed to.
 *
 * The sets come most preferred first (an account's evals, newest first) and end with the usual figures (the
 * prior). The router takes the first set that scores at least two of the models it may route to for the account,
 * else the last one: an eval of models the router cannot use (the local ones beside real providers, models the
 * operator or the account excludes) does not leave it with nothing to route to.
 */
export interface QualitySource {
  forAccount(accountId: string): readonly QualityScores[] | Promise<readonly QualityScores[]>;
}

const prior: QualityScores = {
  scores: new Map(QUALITY_PRIOR.map((figure) => [figure.model, figure.score])),
  source: 'prior',
};

/** The public prior of catalog/quality.ts, the same for every account. */
export class PriorQuality implements QualitySource {
  forAccount(): readonly QualityScores[] {
    return [prior];
  }
}

/** The first set that scores two or more of `models`, else the last set; each with the models it scores. */
export function figuresAmong<T extends { id: string }>(
  sets: readonly QualityScores[],
  models: readonly T[],
): QualityScores & { scored: T[] } {
  for (const [index, set] of sets.entries()) {
    const scored = models.filter((model) => set.scores.has(model.id));
    if (scored.length >= 2 || index === sets.length - 1) return { ...set, scored };
  }
  return { scores: new Map(), source: 'none', scored: [] };
}
