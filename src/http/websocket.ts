import { type IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { type WebSocket, WebSocketServer } from 'ws';
import { RequestRefused } from '../contracts/errors.ts';
import { describeError } from './errors.ts';
import { requestIdHeaders } from './request-id.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A WebSocket endpoint: reached by an upgrade request; any other request is answered 426. */
    webSocket?: boolean;
  }
  interface FastifyInstance {
    webSockets: WebSocketUpgrades;
  }
}

export interface WebSocketUpgrades {
  isUpgrade(request: FastifyRequest): boolean;
  /** Aborted when the client's connection closes before or after the handshake. */
  closed(request: FastifyRequest): AbortSignal;
  /** Completes the handshake (101, with these extra headers) and takes the connection from Fastify. */
  accept(request: FastifyRequest, reply: FastifyReply, headers: Record<string, string>): Promise<WebSocket>;
}

interface PendingUpgrade {
  socket: Duplex;
  head: Buffer;
  headers: Record<string, string>;
  gone: AbortController;
}

/** One WebSocket message at most this large; audio is sent in frames of a few kilobytes. */
const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/**
 * Upgrade requests go through Fastify's router like any other request (the way @fastify/websocket does it), so the
 * `/v1` hooks (key, rate limit) and the error handler apply: a refusal is an HTTP answer in the API's error shape,
 * written on the socket before it is closed. A route marked `config.webSocket` then calls `accept`.
 *
 * Browsers cannot set headers on a WebSocket, so on those routes a key given as the `api_key` query parameter moves
 * into the Authorization header (unless one is sent) and out of the URL, which is then never logged.
 */
export const webSocketPlugin = fp(async (app) => {
  const paths = new Set<string>();
  const pending = new WeakMap<IncomingMessage, PendingUpgrade>();
  const server = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  server.on('headers', (lines, raw) => {
    for (const [name, value] of Object.entries(pending.get(raw)?.headers ?? {}))
      lines.push(`${name}: ${value}`);
  });

  app.addHook('onRoute', (route) => {
    if (route.config?.webSocket) paths.add(route.url);
  });

  /** Whether the request is for a WebSocket route (its key, if in the query, moved to the header). */
  const moveKeyToHeader = (raw: IncomingMessage) => {
    let url: URL;
    try {
      url = new URL(raw.url ?? '/', 'http://gateway');
    } catch {
      return false; // Fastify answers a URL it cannot parse itself.
    }
    if (!paths.has(url.pathname)) return false;
    const key = url.searchParams.get('api_key');
    if (key === null) return true;
    url.searchParams.delete('api_key');
    raw.url = `${url.pathname}${url.search}`;
    if (!raw.headers.authorization) raw.headers.authorization = `Bearer ${key}`;
    return true;
  };

  const onRequest = (raw: IncomingMessage) => {
    moveKeyToHeader(raw);
  };
  const onUpgrade = (raw: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const response = new ServerResponse(raw);
    response.assignSocket(socket as never);
    // An answer instead of an upgrade (a refusal, or any other route) ends the connection: its HTTP parser is gone.
    response.shouldKeepAlive = false;
    response.on('finish', () => socket.destroy());
    if (moveKeyToHeader(raw)) {
      const gone = new AbortController();
      socket.once('close', () => gone.abort());
      pending.set(raw, { socket, head, headers: {}, gone });
    } else if (raw.method !== 'GET' && raw.method !== 'HEAD') {
      // A body after an upgrade header (h2c, say) would never reach the route: the parser stopped at the headers.
      const refusal = new RequestRefused('invalid', `Upgrade is not supported on ${raw.method} ${raw.url}`);
      const described = describeError(refusal);
      response.writeHead(described.status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(described.body));
      return;
    }
    // Other paths answer as if the Upgrade header were not there (e.g. `curl --http2` over plain HTTP).
    app.routing(raw, response);
  };
  app.server.prependListener('request', onRequest);
  app.server.on('upgrade', onUpgrade);
  app.addHook('onClose', async () => {
    app.server.off('request', onRequest);
    app.server.off('upgrade', onUpgrade);
    server.close();
  });

  const upgrades: WebSocketUpgrades = {
    isUpgrade: (request) => pending.has(request.raw),
    closed(request) {
      const upgrade = pending.get(request.raw);
      if (!upgrade) throw new Error('not an upgrade request');
      return upgrade.gone.signal;
    },
    async accept(request, reply, headers) {
      const upgrade = pending.get(request.raw);
      if (!upgrade) throw new Error('not an upgrade request');
      reply.hijack();
      // ws drops a socket that closed meanwhile without calling back.
      if (upgrade.gone.signal.aborted)
        throw new Error('the client closed the connection before the handshake');
      upgrade.headers = { ...requestIdHeaders(request), ...headers };
      return new Promise((resolve) =>
        server.handleUpgrade(request.raw, upgrade.socket, upgrade.head, resolve),
      );
    },
  };
  app.decorate('webSockets', upgrades);

  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.config.webSocket && !upgrades.isUpgrade(request)) {
      throw new RequestRefused(
        'upgrade_required',
        `Upgrade required: ${request.routeOptions.url} is a WebSocket endpoint; connect with a WebSocket client`,
        { upgrade: 'websocket' },
      );
    }
  });
});
