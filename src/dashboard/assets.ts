import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import { RequestRefused } from '../contracts/errors.ts';

const require = createRequire(import.meta.url);
const own = (name: string) => new URL(`./public/${name}`, import.meta.url);

/** Every script and style the pages load, served by the gateway from node_modules and this folder: no CDN. */
const FILES: Record<string, { path: string | URL; type: string }> = {
  'htmx.min.js': { path: require.resolve('htmx.org/dist/htmx.min.js'), type: 'text/javascript' },
  'uPlot.iife.min.js': { path: require.resolve('uplot/dist/uPlot.iife.min.js'), type: 'text/javascript' },
  'uPlot.min.css': { path: require.resolve('uplot/dist/uPlot.min.css'), type: 'text/css' },
  'dashboard.js': { path: own('dashboard.js'), type: 'text/javascript' },
  'dashboard.css': { path: own('dashboard.css'), type: 'text/css' },
};

export function assetRoutes(app: FastifyInstance): void {
  const loaded = new Map(
    Object.entries(FILES).map(([name, file]) => {
      const body = readFileSync(file.path);
      return [
        name,
        { body, type: file.type, etag: `"${createHash('sha256').update(body).digest('hex').slice(0, 16)}"` },
      ];
    }),
  );
  app.get<{ Params: { name: string } }>('/dashboard/assets/:name', async (request, reply) => {
    const asset = loaded.get(request.params.name);
    if (!asset) throw new RequestRefused('not_found', `No asset ${request.params.name}`);
    reply.header('cache-control', 'public, max-age=3600').header('etag', asset.etag).type(asset.type);
    if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
    return asset.body;
  });
}
