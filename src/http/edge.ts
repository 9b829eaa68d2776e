import { type IncomingMessage, type Server, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { PassThrough, type Readable } from 'node:stream';
import type { FastifyHttpOptions, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { EdgeLimits } from '../config.ts';
import { RequestRefused } from '../contracts/errors.ts';
import { findBadInput } from '../contracts/input-check.ts';
import { BODY_SHAPE_LIMITS, describeOversizedShape } from '../contracts/json-shape.ts';
import { describeError } from './errors.ts';

export const DEFAULT_EDGE_LIMITS: EdgeLimits = {
  maxBodyBytes: 10 * 1024 * 1024,
  headersTimeoutMs: 15_000,
  bodyTimeoutMs: 30_000,
  requestTimeoutMs: 300_000,
  keepAliveTimeoutMs: 65_000,
};

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

/**
 * The HTTP server's own limits, and the errors Fastify and Node answer by themselves (a bad URL encoding, an
 * over-long path parameter, a request the HTTP parser refuses, a timeout), all in the API's error shape.
 */
export function edgeServerOptions(limits: EdgeLimits): FastifyHttpOptions<Server> {
  return {
    bodyLimit: limits.maxBodyBytes,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // Node checks the header and request deadlines on this interval (30 s by default, which would let a
    // slow client overstay its deadline by that much).
    http: { headersTimeout: limits.headersTimeoutMs, connectionsCheckingInterval: 1000 },
    frameworkErrors: (error, _request, reply) => answerFrameworkError(error, reply as FastifyReply),
    clientErrorHandler: (error, socket) => answerClientError(error, socket, limits),
  };
}

function answerFrameworkError(error: unknown, reply: FastifyReply): void {
  const described = describeError(error);
  reply.code(described.status).headers(described.headers).send(described.body);
}

/**
 * A request the HTTP parser refused, or one that did not arrive in time: answered on the raw socket, which is then
 * closed (what follows on it cannot be framed). Nothing is written once a response has begun.
 */
function answerClientError(error: Error & { code?: string }, socket: Socket, limits: EdgeLimits): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const refusal =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? new RequestRefused(
          'request_timeout',
          `The request did not arrive in time (headers within ${seconds(limits.headersTimeoutMs)}, the whole request within ${seconds(limits.requestTimeoutMs)})`,
        )
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? new RequestRefused('headers_too_large', 'Request headers are too large')
        : new RequestRefused(
            'invalid',
            `Malformed HTTP request: ${(error as { reason?: string }).reason ?? error.message}`,
          );
  const started = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
  if (!socket.writable || started) {
    socket.destroy();
    return;
  }
  const described = describeError(refusal);
  const status = described.status;
  const body = JSON.stringify(described.body);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    () => socket.destroy(),
  );
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A JSON body: its shape bounded on the raw bytes before anything else reads them (src/contracts/json-shape.ts),
 * then strict UTF-8, then every string, key and nesting level checked (src/contracts/input-check.ts).
 */
export function parseJsonBody(body: Buffer): unknown {
  // An empty body is no body (Python's SDKs send `Content-Type: application/json` on body-less calls).
  if (body.length === 0) return undefined;
  const oversized = describeOversizedShape(body, BODY_SHAPE_LIMITS, 'body');
  if (oversized) throw new RequestRefused('invalid', `Invalid body: ${oversized}`);
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw new RequestRefused('invalid', 'Malformed JSON body: the body is not valid UTF-8');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new RequestRefused('invalid', `Malformed JSON body: ${(error as Error).message}`);
  }
  const problem = findBadInput(value, 'body');
  if (problem) throw new RequestRefused('invalid', problem);
  return value;
}

const hasNoBody = (headers: Record<string, string | string[] | undefined>) =>
  headers['transfer-encoding'] === undefined &&
  (headers['content-length'] === undefined || headers['content-length'] === '0');

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route reads a multipart/form-data body (src/http/uploads.ts); any other route answers one with a 415. */
    takesFiles?: boolean;
  }
}

/** Parsers, hooks and deadlines of the edge; installed on the root instance before any route. */
export function installEdge(app: FastifyInstance, limits: EdgeLimits): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer' },
    async (_request: FastifyRequest, body: Buffer) => parseJsonBody(body),
  );
  // No route takes text: a text/plain body is refused as any other type, not read as a JSON string.
  app.removeContentTypeParser('text/plain');
  // Any other type (multipart has its own parser) is refused before its body is read.
  app.addContentTypeParser('*', async (request: FastifyRequest) => {
    throw unsupportedType(request.headers['content-type']);
  });

  app.addHook('onRequest', async (request) => {
    // A body-less request's Content-Type describes nothing: it is dropped, so no parser runs.
    const headers = request.raw.headers;
    if (headers['content-type'] !== undefined && hasNoBody(headers)) delete headers['content-type'];
  });
  app.addHook('preParsing', async (request, _reply, payload) => {
    // Uploads stream for as long as the request deadline allows; a JSON body has its own, shorter one.
    // (request.isMultipart() only answers once the body's parser has run, after this hook.)
    const multipart = /^\s*multipart\//i.test(request.headers['content-type'] ?? '');
    if (multipart) refuseEncodedMultipart(request.headers['content-encoding']);
    if (request.raw.complete || multipart || bodyArrived(request.raw)) return payload;
    return withDeadline(payload, limits.bodyTimeoutMs);
  });
  app.addHook('preValidation', async (request) => {
    // @fastify/multipart's parser serves every route and leaves the body unread: a route that takes no files
    // refuses it as any other type it cannot read, rather than see no body at all.
    if (request.isMultipart() && request.routeOptions.config.takesFiles !== true) {
      throw unsupportedType(request.headers['content-type']);
    }
    const problem =
      findBadInput(request.params, 'params') ??
      findBadInput(request.query, 'querystring') ??
      (typeof request.body === 'string' ? findBadInput(request.body, 'body') : undefined);
    if (problem) throw new RequestRefused('invalid', problem);
  });
  app.addHook('onSend', async (request, reply) => {
    // Answered before its body arrived (a 401, a 413, a 415, a timeout): the rest is not read, the socket closes.
    if (!request.raw.complete) reply.header('connection', 'close');
  });
}

/**
 * An upload is refused whole, before a byte of it is read, when it is encoded (gzip, ...): the multipart parser reads
 * the request's own bytes, so a decoded stream beside it would leave both waiting until the request deadline, and the
 * upload limits count the bytes as sent. A JSON body is decoded instead, within its size limit (app.ts).
 */
function refuseEncodedMultipart(encoding: string | string[] | undefined): void {
  const given = (Array.isArray(encoding) ? encoding.join(', ') : (encoding ?? '')).trim();
  if (given === '' || given.toLowerCase() === 'identity') return;
  throw new RequestRefused(
    'unsupported_media_type',
    `'content-encoding': a multipart/form-data upload is not decoded; send it without Content-Encoding (got '${given.slice(0, 100)}')`,
  );
}

export function unsupportedType(given: string | undefined): RequestRefused {
  const what = given ? `Unsupported Content-Type '${given.slice(0, 100)}'` : 'Missing Content-Type';
  return new RequestRefused(
    'unsupported_media_type',
    `${what}: send application/json (multipart/form-data where a route takes files)`,
  );
}

/**
 * Every byte the Content-Length announced is already read: there is nothing left to wait for. Node marks the
 * request complete a turn later than it has the bytes, so `complete` alone sent nearly every JSON body through the
 * deadline's extra stream and timer.
 */
function bodyArrived(raw: IncomingMessage): boolean {
  const length = raw.headers['content-length'];
  return length !== undefined && raw.readableLength >= Number(length);
}

/** The body stream, cut with a 408 if it has not all arrived within `ms`. */
function withDeadline(payload: Readable, ms: number): Readable {
  const out = new PassThrough();
  const timer = setTimeout(() => {
    payload.unpipe(out);
    payload.pause();
    out.destroy(
      new RequestRefused('request_timeout', `The request body did not arrive within ${seconds(ms)}`),
    );
  }, ms);
  const stop = () => clearTimeout(timer);
  out.once('close', stop);
  payload.once('close', stop);
  payload.once('error', (error) => out.destroy(error));
  // The parser stops listening once it has refused the body (413); a late error then has no one to tell.
  out.on('error', () => {});
  payload.pipe(out);
  return out;
}
