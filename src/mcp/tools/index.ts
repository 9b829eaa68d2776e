import type { KeyHolder } from '../../accounts/live-state.ts';
import type { ToolDef } from '../tool.ts';
import {
  getBalanceTool,
  getEvalTool,
  getJobTool,
  getReplayTool,
  getRequestTool,
  getUsageTool,
  listBudgetsTool,
  listJobsTool,
  listKeysTool,
  listRequestsTool,
} from './account.ts';
import { getModelTool, listModelsTool } from './catalog.ts';
import { chatTool } from './chat.ts';
import { generateImageTool, speakTool, transcribeTool } from './media.ts';
import { classifyTool, embedTool, moderateTool, ocrTool, rerankTool, translateTool } from './text.ts';
import {
  createSubAccountTool,
  setBudgetTool,
  startEvalTool,
  startJobTool,
  startReplayTool,
} from './write.ts';

/** Every tool, in the order `tools/list` shows them. */
export const ALL_TOOLS: readonly ToolDef[] = [
  chatTool,
  embedTool,
  generateImageTool,
  transcribeTool,
  speakTool,
  translateTool,
  classifyTool,
  moderateTool,
  rerankTool,
  ocrTool,
  listModelsTool,
  getModelTool,
  getBalanceTool,
  getUsageTool,
  listBudgetsTool,
  listKeysTool,
  listRequestsTool,
  getRequestTool,
  listJobsTool,
  getJobTool,
  getEvalTool,
  getReplayTool,
  createSubAccountTool,
  setBudgetTool,
  startJobTool,
  startEvalTool,
  startReplayTool,
];

/** Tools whose twin is a route not every build registers: offered only where it is. */
const OPTIONAL_TWINS: Record<string, { method: 'GET' | 'POST'; url: string }> = {
  get_eval: { method: 'GET', url: '/v1/evals/:id' },
  start_eval: { method: 'POST', url: '/v1/evals' },
};

/** The tools this gateway can serve, given which routes it has. */
export function servedTools(
  hasRoute: (route: { method: 'GET' | 'POST'; url: string }) => boolean,
): ToolDef[] {
  return ALL_TOOLS.filter((tool) => {
    const twin = OPTIONAL_TWINS[tool.name];
    return twin === undefined || hasRoute(twin);
  });
}

/** The tools one key sees: write tools only when its account enables them, management tools only for main keys. */
export function toolsFor(
  tools: readonly ToolDef[],
  caller: { holder: KeyHolder; writeTools: boolean },
): Map<string, ToolDef> {
  const visible = tools.filter(
    (tool) =>
      (tool.access !== 'write' || caller.writeTools) && !(tool.mainKeyOnly && caller.holder.subAccountId),
  );
  return new Map(visible.map((tool) => [tool.name, tool]));
}
