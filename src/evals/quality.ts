import { completedEvalResults } from '../../projections/evals/index.ts';
import type { Sql } from '../../projections/types.ts';
import { PriorQuality, type QualityScores, type QualitySource } from '../routing/quality.ts';

/** How long an account's figures are kept before the read model is asked again. */
const FRESH_MS = 5_000;

interface StoredCandidate {
  model: string;
  meanScore: number | null;
}

/**
 * The router's quality figures for an account: the mean scores of each completed eval that graded at least two
 * candidates (source `eval:<id>`), newest first, then the public prior. One eval's scores share one scale (its
 * dataset); scores of different evals, or of an eval and the prior, do not, so they are never mixed: the router
 * takes the newest eval that scores two models it can use and chooses among those, else the prior.
 */
export class EvalQuality implements QualitySource {
  private readonly prior = new PriorQuality();
  private readonly recent = new Map<string, { at: number; scores: readonly QualityScores[] }>();

  /** `clock` is the runtime's, so that a test can let the kept figures age without waiting. */
  constructor(
    private readonly sql: Sql,
    private readonly clock: () => Date,
  ) {}

  async forAccount(accountId: string): Promise<readonly QualityScores[]> {
    const now = this.clock().getTime();
    const kept = this.recent.get(accountId);
    if (kept && now - kept.at < FRESH_MS) return kept.scores;
    const scores = [...(await this.fromEvals(accountId)), ...this.prior.forAccount()];
    this.recent.set(accountId, { at: now, scores });
    if (this.recent.size > 10_000) this.recent.delete(this.recent.keys().next().value as string);
    return scores;
  }

  private async fromEvals(accountId: string): Promise<QualityScores[]> {
    const sets: QualityScores[] = [];
    for (const done of await completedEvalResults(this.sql, accountId)) {
      const candidates = (done.result.candidates ?? []) as StoredCandidate[];
      const graded = candidates.filter((c) => c.meanScore !== null);
      if (graded.length < 2) continue;
      sets.push({
        scores: new Map(graded.map((c) => [c.model, c.meanScore as number])),
        source: `eval:${done.evalId}`,
      });
    }
    return sets;
  }
}
