/**
 * The router's quality prior: one public figure per model, kept as data with where and when it was read. The
 * figures are LMSYS Chatbot Arena (text, overall) ratings, read from the dated snapshots that openlm.ai mirrors
 * with attribution to LMSYS; `listedAs` is the leaderboard's own name for the entry, so a reader can find the
 * row. Only the ranking among the candidates matters to the router (scores are rescaled to 0..1 among them),
 * and snapshots a few months apart are close enough for that (the same models moved by a few points between
 * them). An account's own completed evals override these (see routing/quality.ts).
 */
export interface QualityFigure {
  model: string;
  score: number;
  /** What the figure measures. */
  metric: string;
  /** The entry's name on the leaderboard. */
  listedAs: string;
  /** The snapshot's date (YYYY-MM-DD). */
  asOf: string;
  source: string;
}

const ARENA = 'LMSYS Chatbot Arena rating (text, overall)';
const MIRROR = 'https://openlm.ai/chatbot-arena (snapshot attributed to LMSYS)';

const arena = (model: string, score: number, listedAs: string, asOf: string): QualityFigure => ({
  model,
  score,
  metric: ARENA,
  listedAs,
  asOf,
  source: MIRROR,
});

export const QUALITY_PRIOR: readonly QualityFigure[] = [
  arena('google/gemini-2.5-pro', 1437, 'Gemini-2.5-Pro-Exp-03-25', '2025-05-05'),
  arena('openai/o3', 1411, 'o3-2025-04-16', '2025-05-05'),
  arena('openai/chatgpt-4o-latest', 1408, 'ChatGPT-4o-latest (2025-03-26)', '2025-05-05'),
  arena('x-ai/grok-3', 1402, 'Grok-3-Preview-02-24', '2025-05-05'),
  arena('openai/gpt-4.5-preview', 1398, 'GPT-4.5-Preview', '2025-05-05'),
  arena('google/gemini-2.5-flash', 1393, 'Gemini-2.5-Flash-Preview-04-17', '2025-05-05'),
  arena('deepseek/deepseek-chat', 1372, 'DeepSeek-V3-0324', '2025-05-05'),
  arena('anthropic/claude-opus-4-0', 1372, 'Claude Opus 4 (20250514)', '2025-07-01'),
  arena('openai/gpt-4.1', 1367, 'GPT-4.1-2025-04-14', '2025-05-05'),
  arena('deepseek/deepseek-reasoner', 1358, 'DeepSeek-R1', '2025-05-05'),
  arena('google/gemini-2.0-flash', 1355, 'Gemini-2.0-Flash-001', '2025-05-05'),
  arena('openai/o4-mini', 1352, 'o4-mini-2025-04-16', '2025-05-05'),
  arena('openai/o1', 1350, 'o1-2024-12-17', '2025-05-05'),
  arena('openai/gpt-4.1-mini', 1323, 'GPT-4.1-mini-2025-04-14', '2025-05-05'),
  arena('google/gemini-2.0-flash-lite', 1309, 'Gemini-2.0-Flash-Lite-Preview-02-05', '2025-02-21'),
  arena('openai/o3-mini', 1306, 'o3-mini', '2025-02-21'),
  arena('openai/o1-mini', 1304, 'o1-mini', '2025-02-21'),
  arena('google/gemini-1.5-pro', 1302, 'Gemini-1.5-Pro-002', '2025-02-21'),
  arena('anthropic/claude-3-5-sonnet', 1283, 'Claude 3.5 Sonnet (20241022)', '2025-02-21'),
  arena('openai/gpt-4o-mini', 1273, 'GPT-4o-mini-2024-07-18', '2025-02-21'),
  // The built-in echo models answer without any model; their order only lets the demo's router tell a small
  // model from a large one. Not a measurement.
  {
    model: 'local/echo',
    score: 1,
    metric: 'demo stand-in',
    listedAs: 'local/echo',
    asOf: '2025-01-01',
    source: 'the gateway (priced like a small model)',
  },
  {
    model: 'local/echo-pro',
    score: 2,
    metric: 'demo stand-in',
    listedAs: 'local/echo-pro',
    asOf: '2025-01-01',
    source: 'the gateway (priced like a large model)',
  },
];
