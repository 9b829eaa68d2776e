/**
 * The router's quality prior: one public figure per model, kept as data with where and when it was read. Every
 * figure comes from one snapshot of the LMArena (arena.ai, formerly LMSYS Chatbot Arena) text leaderboard, so they
 * share one Bradley-Terry scale: ratings read from different snapshots are not comparable (the scale drifts by tens
 * of points between them), and mixing them would order models by the date they were read. `listedAs` is the
 * leaderboard's own name for the entry, so a reader can find the row. Only the ranking among the candidates matters
 * to the router (scores are rescaled to 0..1 among them). An account's own completed evals override these (see
 * routing/quality.ts). Which models have no figure, and why, is in docs/routing.md.
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

const ARENA = 'LMArena rating (text, overall)';
/** The snapshot: arena.ai's full text leaderboard as copied, in full, by a daily public job. */
const SNAPSHOT = '2026-07-30';
const SOURCE =
  'https://arena.ai/leaderboard/text, as copied on 2026-07-30 10:24 UTC by github.com/CherryHQ/cherry-studio-docs ' +
  '(other/model_rank/lmarena.md, commit 5bc06d153bc24cbd2af8d2b768da7821b6ebdffb)';

const arena = (model: string, score: number, listedAs: string): QualityFigure => ({
  model,
  score,
  metric: ARENA,
  listedAs,
  asOf: SNAPSHOT,
  source: SOURCE,
});

/**
 * Highest first. An entry named with a reasoning effort (`-high`, `-xhigh`) stands for its model only where the
 * leaderboard lists no entry without one; a `-thinking` entry never does (extended thinking is off unless asked).
 */
export const QUALITY_PRIOR: readonly QualityFigure[] = [
  arena('anthropic/claude-fable-5', 1508, 'claude-fable-5'),
  arena('anthropic/claude-opus-4-6', 1497, 'claude-opus-4-6'),
  arena('anthropic/claude-opus-4-7', 1493, 'claude-opus-4-7'),
  arena('anthropic/claude-opus-5', 1493, 'claude-opus-5-high'),
  arena('google/gemini-3.1-pro-preview', 1486, 'gemini-3.1-pro-preview'),
  arena('google/gemini-3-pro-preview', 1486, 'gemini-3-pro'),
  arena('openai/gpt-5.6-sol', 1485, 'gpt-5.6-sol-xhigh'),
  arena('google/gemini-3.6-flash', 1482, 'gemini-3.6-flash'),
  arena('google/gemini-3.5-flash', 1476, 'gemini-3.5-flash-high'),
  arena('openai/gpt-5.5', 1476, 'gpt-5.5'),
  arena('anthropic/claude-opus-4-8', 1474, 'claude-opus-4-8'),
  arena('google/gemini-3-flash-preview', 1473, 'gemini-3-flash'),
  arena('x-ai/grok-4.20', 1472, 'grok-4.20-beta-0309-reasoning'),
  arena('anthropic/claude-sonnet-4-6', 1472, 'claude-sonnet-4-6'),
  arena('x-ai/grok-4.20-multi-agent', 1471, 'grok-4.20-multi-agent-beta-0309'),
  arena('anthropic/claude-opus-4-5', 1469, 'claude-opus-4-5-20251101'),
  arena('x-ai/grok-4.5', 1468, 'grok-4.5'),
  arena('openai/gpt-5.4', 1465, 'gpt-5.4'),
  arena('moonshotai/kimi-k2.6', 1461, 'kimi-k2.6'),
  arena('anthropic/claude-sonnet-5', 1460, 'claude-sonnet-5-high'),
  arena('google/gemini-3.5-flash-lite', 1460, 'gemini-3.5-flash-lite'),
  arena('deepseek/deepseek-v4-pro', 1457, 'deepseek-v4-pro'),
  arena('anthropic/claude-sonnet-4-5', 1455, 'claude-sonnet-4-5-20250929'),
  arena('openai/gpt-5.4-mini', 1449, 'gpt-5.4-mini-high'),
  arena('openai/gpt-5.3', 1449, 'gpt-5.3-chat-latest'),
  arena('anthropic/claude-opus-4-1', 1447, 'claude-opus-4-1-20250805'),
  arena('google/gemini-2.5-pro', 1446, 'gemini-2.5-pro'),
  arena('openai/gpt-4.5-preview', 1445, 'gpt-4.5-preview-2025-02-27'),
  arena('openai/chatgpt-4o-latest', 1443, 'chatgpt-4o-latest-20250326'),
  arena('x-ai/grok-4.3', 1443, 'grok-4.3'),
  arena('openai/gpt-5.1', 1439, 'gpt-5.1'),
  arena('deepseek/deepseek-v4-flash', 1436, 'deepseek-v4-flash'),
  arena('openai/gpt-5.2', 1435, 'gpt-5.2'),
  arena('openai/gpt-5', 1434, 'gpt-5-high'),
  arena('google/gemini-3.1-flash-lite', 1432, 'gemini-3.1-flash-lite-preview'),
  arena('x-ai/grok-4-1-fast-reasoning', 1431, 'grok-4-1-fast-reasoning'),
  arena('openai/o3', 1431, 'o3-2025-04-16'),
  arena('mistral/mistral-medium-3-5', 1427, 'mistral-medium-3.5'),
  arena('deepseek/deepseek-v3.2', 1425, 'deepseek-v3.2'),
  arena('deepseek/deepseek-v3.2-exp', 1423, 'deepseek-v3.2-exp'),
  arena('mistral/mistral-large-2512', 1415, 'mistral-large-3'),
  arena('deepseek/deepseek-v3.1-terminus', 1415, 'deepseek-v3.1-terminus'),
  arena('openai/gpt-4.1', 1414, 'gpt-4.1-2025-04-14'),
  arena('anthropic/claude-opus-4-0', 1413, 'claude-opus-4-20250514'),
  arena('anthropic/claude-haiku-4-5', 1412, 'claude-haiku-4-5-20251001'),
  arena('x-ai/grok-3', 1411, 'grok-3-preview-02-24'),
  arena('google/gemini-2.5-flash', 1410, 'gemini-2.5-flash'),
  arena('x-ai/grok-4-0709', 1410, 'grok-4-0709'),
  arena('mistral/mistral-medium-3-1', 1409, 'mistral-medium-2508'),
  arena('x-ai/grok-4-fast-reasoning', 1404, 'grok-4-fast-reasoning'),
  arena('openai/gpt-5.4-nano', 1403, 'gpt-5.4-nano-high'),
  arena('openai/o1', 1402, 'o1-2024-12-17'),
  arena('openai/gpt-5-mini', 1390, 'gpt-5-mini-high'),
  arena('openai/o4-mini', 1390, 'o4-mini-2025-04-16'),
  arena('anthropic/claude-sonnet-4-0', 1389, 'claude-sonnet-4-20250514'),
  arena('openai/o1-preview', 1388, 'o1-preview'),
  arena('openai/gpt-4.1-mini', 1383, 'gpt-4.1-mini-2025-04-14'),
  arena('anthropic/claude-3-5-sonnet', 1373, 'claude-3-5-sonnet-20241022'),
  arena('anthropic/claude-3-7-sonnet-latest', 1372, 'claude-3-7-sonnet-20250219'),
  arena('google/gemini-2.0-flash', 1360, 'gemini-2.0-flash-001'),
  arena('x-ai/grok-3-mini', 1357, 'grok-3-mini-beta'),
  arena('cohere/command-a', 1354, 'command-a-03-2025'),
  arena('google/gemini-2.0-flash-lite', 1353, 'gemini-2.0-flash-lite-preview-02-05'),
  arena('google/gemini-1.5-pro', 1351, 'gemini-1.5-pro-002'),
  arena('openai/o3-mini', 1348, 'o3-mini'),
  arena('openai/gpt-4o-2024-05-13', 1346, 'gpt-4o-2024-05-13'),
  arena('openai/gpt-5-nano', 1337, 'gpt-5-nano-high'),
  arena('openai/o1-mini', 1337, 'o1-mini'),
  arena('openai/gpt-4o', 1335, 'gpt-4o-2024-08-06'),
  arena('openai/gpt-4-turbo', 1324, 'gpt-4-turbo-2024-04-09'),
  arena('anthropic/claude-3-5-haiku-latest', 1324, 'claude-3-5-haiku-20241022'),
  arena('openai/gpt-4.1-nano', 1322, 'gpt-4.1-nano-2025-04-14'),
  arena('anthropic/claude-3-opus-latest', 1322, 'claude-3-opus-20240229'),
  arena('openai/gpt-4o-mini', 1318, 'gpt-4o-mini-2024-07-18'),
  arena('google/gemini-1.5-flash', 1309, 'gemini-1.5-flash-002'),
  arena('anthropic/claude-3-sonnet', 1281, 'claude-3-sonnet-20240229'),
  arena('openai/gpt-4', 1275, 'gpt-4-0613'),
  arena('cohere/c4ai-aya-expanse-32b', 1267, 'c4ai-aya-expanse-32b'),
  arena('anthropic/claude-3-haiku', 1261, 'claude-3-haiku-20240307'),
  arena('openai/gpt-3.5-turbo', 1225, 'gpt-3.5-turbo-0125'),
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
