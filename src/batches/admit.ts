import type { Catalog } from '../catalog/types.ts';
import { RequestRefused } from '../contracts/errors.ts';
import type { BlobStore } from '../files/blob-store.ts';
import { fileBlobKey } from '../files/service.ts';
import { isAvailable } from '../providers/registry.ts';
import { inputLines, parseInputLine } from './input.ts';
import { type BatchSettings, lineModel, servedByBatchApi } from './settings.ts';

/** How many refused models a refusal names. */
const NAMED = 5;

/**
 * With GATEWAY_BATCH_FALLBACK=refuse, a batch is refused at creation when a line names a model whose provider has
 * no batch API here (the built-in models excepted: no provider is paid for them), or leaves the choice to the
 * router (`auto`, no model), which could choose one. Lines that are invalid or name no known model are left to
 * fail on their own, as they would otherwise.
 */
export async function refuseUnbatchable(
  deps: { blobs: BlobStore; catalog: Catalog; env: NodeJS.ProcessEnv; settings: BatchSettings },
  inputFileId: string,
  endpoint: string,
): Promise<void> {
  if (deps.settings.fallback !== 'refuse') return;
  const refused = new Set<string>();
  const seen = new Set<string>();
  for await (const { line, text } of inputLines(deps.blobs.read(fileBlobKey(inputFileId)))) {
    const parsed = parseInputLine(line, text, endpoint, seen);
    if (!parsed.valid) continue;
    const id = (parsed.body as { model?: unknown }).model;
    const model = lineModel(deps.catalog, deps.env, endpoint, id);
    if (model === undefined) {
      if (typeof id !== 'string' || id === 'auto' || id.startsWith('auto/'))
        refused.add(String(id ?? 'auto'));
      continue;
    }
    // A model the gateway cannot reach fails on its own, as it would anywhere.
    const reachable = endpoint !== '/v1/chat/completions' || isAvailable(model, deps.env);
    if (
      model.provider !== 'local' &&
      reachable &&
      !servedByBatchApi(deps.settings, model, endpoint, deps.env)
    )
      refused.add(model.id);
  }
  if (refused.size === 0) return;
  const named = [...refused].slice(0, NAMED).join(', ');
  const more = refused.size > NAMED ? ` and ${refused.size - NAMED} more` : '';
  throw new RequestRefused(
    'invalid',
    `'input_file_id': no batch API serves ${named}${more} on this gateway, which refuses such batch lines rather than run them at full price`,
  );
}
