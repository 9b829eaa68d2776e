import type { FastifyInstance } from 'fastify';
import type { LiveAccounts } from '../accounts/live-state.ts';
import type { Config } from '../config.ts';
import type { BlobStore } from '../files/blob-store.ts';
import { DEFAULT_EXPIRES_IN, type MediaUrls } from '../media/signed-urls.ts';
import { mcpHostnames, mcpRoutes } from './route.ts';

/** Puts the MCP server at `/mcp` on the gateway's app, beside the `/v1` routes its tools call. */
export async function registerMcp(
  app: FastifyInstance,
  deps: {
    config: Config;
    live: LiveAccounts;
    blobs: BlobStore;
    media: MediaUrls;
    log(message: string): void;
  },
): Promise<void> {
  const { config } = deps;
  await app.register(
    mcpRoutes({
      app,
      live: deps.live,
      publish: async (key, bytes) => {
        await deps.blobs.write(key, bytes);
        return deps.media.sign(key, DEFAULT_EXPIRES_IN);
      },
      report: (message, error) =>
        deps.log(`${message}: ${error instanceof Error ? error.stack : String(error)}`),
      allowedHosts: () =>
        mcpHostnames(
          [config.env.GATEWAY_URL, config.mcpUrl, app.server.listening ? app.listeningOrigin : undefined],
          config.mcpAllowedHosts,
        ),
    }),
  );
}
