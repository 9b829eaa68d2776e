import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cycles, type ImportEdge, importGraph } from './support/import-graph.ts';

// The layers of ../shared/ARCHITECTURE.md ("Layers inside src/") and the top-level rules ("commands/ never
// imports src/; projections/ never imports commands/"), checked on the import graph of the source files.
// A file may import files of its own layer or of layers below it, never above. Units are the top-level
// folders (and files) of src/, plus commands/, events/ and projections/.

const root = fileURLToPath(new URL('..', import.meta.url));

/** Bottom up. A new folder under src/ fails the test until it is placed here. */
const LAYERS: { name: string; units: string[] }[] = [
  { name: 'contracts', units: ['src/contracts'] },
  {
    // Utilities every feature stands on; `files` is not here: the Files API reads accounts and quotas.
    name: 'base',
    units: [
      'src/config.ts',
      'src/config-file.ts',
      'src/provider-env.ts',
      'src/data-dir-lock.ts',
      'src/db',
      'src/eventstore',
      'src/projections',
      'src/net',
      'src/tokens',
      'src/media',
      'src/limits',
      'src/observability',
    ],
  },
  // Providers are a leaf: contracts, base helpers and catalog types only. The catalog names no provider.
  { name: 'providers and catalog', units: ['src/providers', 'src/catalog'] },
  // Domain services the pipeline and the features call: keys and live state, holds and charges, stored files.
  // Card top-ups (Stripe) credit accounts through the account service, as the operator's top-up does.
  { name: 'domain services', units: ['src/accounts', 'src/billing', 'src/files', 'src/payments'] },
  // The automatic router sits beside the pipeline: catalog, prices and provider health in, a decision out.
  { name: 'pipeline', units: ['src/pipeline', 'src/routing'] },
  // The response cache stands on the pipeline (its embedding calls, the ledger's charge) and serves the features.
  { name: 'response cache', units: ['src/cache'] },
  {
    name: 'features',
    units: [
      'src/chat',
      'src/messages',
      'src/modalities',
      'src/jobs',
      'src/batches',
      'src/webhooks',
      'src/workers',
      'src/requests',
      'src/replays',
      'src/responses',
      'src/evals',
      'src/reconciliation',
    ],
  },
  { name: 'http', units: ['src/http'] },
  // The MCP server's tools call their HTTP twins in process (`inject` on the app), so billing, caps, logging and
  // refusals are the API's own; it stands on http and only the runtime registers it.
  { name: 'mcp', units: ['src/mcp'] },
  // Composition root and operator tools: nothing imports them but each other.
  // The dashboard is an operator tool too: it shows the audit's report and is registered by the runtime alone; it
  // maps errors to statuses as the API does (src/http/errors.ts) and takes the admin token as the routes do.
  { name: 'runtime', units: ['src/runtime.ts', 'src/server.ts', 'src/cli', 'src/audit', 'src/dashboard'] },
];

/** Same-layer edges that are still wrong. */
const FORBIDDEN_SAME_LAYER = new Set(['src/catalog -> src/providers']);

/** Only these may import src/http (the audit and any dashboard read the read models, not routes). */
const HTTP_IMPORTERS = new Set([
  'src/http',
  'src/mcp',
  'src/runtime.ts',
  'src/server.ts',
  'src/cli',
  'src/dashboard',
]);

// An edge that breaks a rule only with a reason written beside it (the developers' guide: "loosen a rule only
// with a reason"). Empty since the layering work of issue 11; an entry whose edge is gone fails the test, so the
// list cannot go stale.
const KNOWN_VIOLATIONS: Record<string, string> = {};

function unitOf(path: string): string {
  const parts = path.split('/');
  if (parts[0] !== 'src') return parts[0] as string;
  return parts.length > 2 ? `src/${parts[1]}` : path;
}

const rank = new Map<string, { index: number; name: string }>();
LAYERS.forEach((layer, index) => {
  for (const unit of layer.units) rank.set(unit, { index, name: layer.name });
});

/** Why the edge `from -> to` (units) breaks a rule, or undefined when it is allowed. */
function ruleBroken(from: string, to: string): string | undefined {
  const top = ['commands', 'events', 'projections'];
  if (top.includes(from) && to.startsWith('src')) return `${from}/ never imports src/`;
  if (from === 'projections' && to === 'commands') return 'projections/ never imports commands/';
  if (from === 'events' && to !== 'events') return 'events/ imports only itself, zod and node';
  if (from === 'commands' && to !== 'events')
    return 'commands/ imports only events/ (and the store port there)';
  if (!from.startsWith('src') || !to.startsWith('src')) return undefined;
  if (to === 'src/http' && !HTTP_IMPORTERS.has(from)) return 'only runtime, server and cli import src/http';
  const a = rank.get(from);
  const b = rank.get(to);
  if (!a || !b) return undefined; // reported by the "every folder has a layer" check
  if (b.index > a.index) return `${a.name} may not import ${b.name} (a layer above it)`;
  if (FORBIDDEN_SAME_LAYER.has(`${from} -> ${to}`)) return `${from} may not import ${to}`;
  return undefined;
}

const { edges, packages } = importGraph(root, ['src', 'commands', 'events', 'projections']);

/** Folder edge → the file edges behind it. */
const folderEdges = new Map<string, ImportEdge[]>();
for (const edge of edges) {
  const from = unitOf(edge.from);
  const to = unitOf(edge.to);
  if (from === to) continue;
  const key = `${from} -> ${to}`;
  folderEdges.set(key, [...(folderEdges.get(key) ?? []), edge]);
}

function describeEdge(key: string, files: ImportEdge[]): string {
  const [from, to] = key.split(' -> ') as [string, string];
  const examples = files.slice(0, 3).map((e) => `    ${e.from} -> ${e.to}`);
  const more = files.length > 3 ? [`    … and ${files.length - 3} more`] : [];
  return [`${key}: ${ruleBroken(from, to) ?? 'closes a folder cycle'}`, ...examples, ...more].join('\n');
}

describe('architecture: the import graph keeps the layers', () => {
  it('reads a graph (the regexes still match the code)', () => {
    expect(edges.length).toBeGreaterThan(500);
    expect(folderEdges.has('commands -> events')).toBe(true);
  });

  it('places every folder of src/ in a layer', () => {
    const units = new Set(edges.flatMap((e) => [unitOf(e.from), unitOf(e.to)]));
    const unplaced = [...units].filter((u) => u.startsWith('src') && !rank.has(u));
    expect(unplaced, 'add these to LAYERS in test/architecture.unit.spec.ts').toEqual([]);
  });

  it('events/ uses no package but zod and node', () => {
    const used = packages.filter((p) => p.from.startsWith('events/') && !['zod', 'node'].includes(p.pkg));
    expect(used).toEqual([]);
  });

  it('has no forbidden folder edge beyond the known violations', () => {
    const broken = [...folderEdges.keys()].filter((key) => {
      const [from, to] = key.split(' -> ') as [string, string];
      return ruleBroken(from, to) !== undefined;
    });
    const gone = Object.keys(KNOWN_VIOLATIONS).filter((key) => !folderEdges.has(key));
    expect(gone, 'fixed: remove from KNOWN_VIOLATIONS').toEqual([]);
    const fresh = broken.filter((key) => !(key in KNOWN_VIOLATIONS));
    expect(
      fresh.map((key) => describeEdge(key, folderEdges.get(key) ?? [])),
      'forbidden imports',
    ).toEqual([]);
  });

  it('has no folder-level cycle', () => {
    const next = new Map<string, Set<string>>();
    for (const key of folderEdges.keys()) {
      if (key in KNOWN_VIOLATIONS) continue;
      const [from, to] = key.split(' -> ') as [string, string];
      next.set(from, (next.get(from) ?? new Set()).add(to));
    }
    const found = cycles(next.keys(), next).map((component) => {
      const inside = [...folderEdges.keys()].filter((key) => {
        const [from, to] = key.split(' -> ') as [string, string];
        return component.includes(from) && component.includes(to) && !(key in KNOWN_VIOLATIONS);
      });
      return `${component.join(', ')} via ${inside.join('; ')}`;
    });
    expect(found, 'folder cycles').toEqual([]);
  });
});

// Issue 33: the pipeline owns a served call from end to end; a feature supplies data and small functions and
// never holds, settles, releases, charges or logs a request itself. Files that still compose the ledger, each with
// why, until the served-call path takes them over. A new file that does fails; an entry whose file no longer does
// fails too, so the list only shrinks.
const LEDGER_COMPOSERS: Record<string, string> = {};

// A call split over lines (`spending` on one, `.logRequest(record)` on the next) counts as well.
const LEDGER_CALL =
  /\bspending\s*\.(?:reserve|settle|release|charge|logRequest)\(|from '(?:\.\.\/)+pipeline\/ledger\.ts'/;

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.includes('.spec.') ? [path] : [];
  });
}

describe('architecture: the served-call path composes the ledger', () => {
  const callers = sourceFiles('src')
    .map((path) => relative(root, join(root, path)))
    .filter((path) => LEDGER_CALL.test(readFileSync(join(root, path), 'utf8')));
  const composers = callers.filter(
    (path) => !path.startsWith('src/pipeline/') && !path.startsWith('src/billing/'),
  );

  // Checked on the pipeline's own ledger steps, so that it holds once no feature composes the ledger.
  it('finds the ledger calls (the pattern still matches the code)', () => {
    expect(callers).toContain('src/pipeline/ledger.ts');
  });

  it('has no feature holding, settling, releasing, charging or logging a request beyond the known ones', () => {
    expect(composers.filter((path) => !(path in LEDGER_COMPOSERS))).toEqual([]);
  });

  it('lists no file that no longer composes the ledger', () => {
    expect(Object.keys(LEDGER_COMPOSERS).filter((path) => !composers.includes(path))).toEqual([]);
  });
});

// Issue 33: the request record is the pipeline's. A feature, a worker or the HTTP edge opens a record
// (`pipeline/record.ts` `openRecord`) and hands the pipeline values (the context, a plan's routing, a bill, a cache
// descriptor); only the pipeline and the ledger write what the record says and turn it into its event.
const RECORD_WRITE = new RegExp(
  [
    'new RequestLog\\(',
    "import \\{[^}]*(?<!type )\\bRequestLog\\b[^}]*\\} from '[./]*billing/request-log\\.ts'",
    '\\b(?:log|requestLog)\\??\\.(?:tag|model|provider|attempts|fallbacks|stream|metered|firstByteMs|errorType|' +
      'errorMessage|costNanos|usage|cacheStatus|cache|routing)\\s*=(?!=)',
    '\\b(?:log|requestLog)\\??\\.(?:tried|firstByte|respond|reopen|finish)\\(',
  ].join('|'),
);

describe('architecture: the pipeline writes the request record', () => {
  const writers = sourceFiles('src')
    .map((path) => relative(root, join(root, path)))
    .filter((path) => RECORD_WRITE.test(readFileSync(join(root, path), 'utf8')));

  // Checked on the pipeline's own writers, so that the pattern is known to still match the code.
  it('finds the record writes (the pattern still matches the code)', () => {
    expect(writers).toEqual(expect.arrayContaining(['src/pipeline/call.ts', 'src/pipeline/record.ts']));
  });

  it('has no file outside the pipeline and the ledger opening or writing a request record itself', () => {
    expect(
      writers.filter((path) => !path.startsWith('src/pipeline/') && !path.startsWith('src/billing/')),
    ).toEqual([]);
  });
});
