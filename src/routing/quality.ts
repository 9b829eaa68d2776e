import { QUALITY_PRIOR } from '../catalog/quality.ts';

/** Quality scores by model id for one account, and what they come from (`prior`, or e.g. `eval:<id>`). */
export interface QualityScores {
  scores: ReadonlyMap<string, number>;
  source: string;
}

/**
 * Where the router's quality figures come from: the seam through which an account's own completed evals
 * override the public prior. Only the order among the candidates matters (the router rescales the scores of the
 * candidates to 0..1), but the scores of one answer must share one scale. A model with no score is not routed to.
 */
export interface QualitySource {
  forAccount(accountId: string): QualityScores | Promise<QualityScores>;
}

const prior: QualityScores = {
  scores: new Map(QUALITY_PRIOR.map((figure) => [figure.model, figure.score])),
  source: 'prior',
};

/** The public prior of catalog/quality.ts, the same for every account. */
export class PriorQuality implements QualitySource {
  forAccount(): QualityScores {
    return prior;
  }
}
