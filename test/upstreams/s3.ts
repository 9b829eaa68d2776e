import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An S3-compatible object store in this process, speaking S3's REST wire format for what the gateway's blob store
 * calls (path-style addressing): PutObject, GetObject, HeadObject and DeleteObject, with S3's XML errors
 * (NoSuchKey, NoSuchBucket, AccessDenied) and aws-chunked bodies decoded. Requests must be signed with AWS
 * Signature Version 4 by the configured access key (the signature itself is not recomputed).
 */
export interface S3Simulator {
  url: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Objects by key (without the bucket). */
  objects: Map<string, Buffer>;
  requests: { method: string; path: string; query: string; headers: Record<string, string> }[];
  close(): Promise<void>;
}

function xmlError(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  resource: string,
): void {
  const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><Resource>${resource}</Resource><RequestId>sim</RequestId></Error>`;
  res.writeHead(status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body) });
  // A HEAD answer has no body: the client reads the status alone.
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** aws-chunked: `hex-size[;chunk-signature=…]\r\n bytes \r\n` … `0\r\n` then trailers. */
function decodeAwsChunked(raw: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = raw.indexOf('\r\n', at);
    if (lineEnd < 0) throw new Error('malformed aws-chunked body');
    const size = Number.parseInt(raw.subarray(at, lineEnd).toString().split(';')[0] as string, 16);
    if (!Number.isFinite(size)) throw new Error('malformed aws-chunked size');
    if (size === 0) return Buffer.concat(parts);
    parts.push(raw.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}

export async function startS3Simulator(bucket = 'gateway-blobs'): Promise<S3Simulator> {
  const accessKeyId = 'AKIASIMULATOR0000001';
  const secretAccessKey = 'simulator-secret';
  const objects = new Map<string, Buffer>();
  const requests: S3Simulator['requests'] = [];

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://s3.local');
    const headers = Object.fromEntries(
      Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]),
    );
    requests.push({ method: req.method ?? '', path: url.pathname, query: url.search, headers });
    const raw = await readBody(req);
    const auth = headers.authorization ?? '';
    const credential =
      /^AWS4-HMAC-SHA256 Credential=([^/]+)\/\d{8}\/[^/]+\/s3\/aws4_request, SignedHeaders=[^,]+, Signature=[0-9a-f]{64}$/.exec(
        auth,
      );
    if (!credential || !headers['x-amz-date'] || !headers['x-amz-content-sha256']) {
      xmlError(res, 403, 'AccessDenied', 'Missing or malformed AWS Signature Version 4', url.pathname);
      return;
    }
    if (credential[1] !== accessKeyId) {
      xmlError(
        res,
        403,
        'InvalidAccessKeyId',
        'The AWS access key Id you provided does not exist',
        url.pathname,
      );
      return;
    }
    const [, bucketName, ...rest] = url.pathname.split('/');
    const key = decodeURIComponent(rest.join('/'));
    if (bucketName !== bucket) {
      xmlError(res, 404, 'NoSuchBucket', 'The specified bucket does not exist', url.pathname);
      return;
    }
    if (!key) {
      xmlError(res, 501, 'NotImplemented', 'Only object operations are simulated', url.pathname);
      return;
    }
    switch (req.method) {
      case 'PUT': {
        const chunked =
          (headers['content-encoding'] ?? '').includes('aws-chunked') ||
          headers['x-amz-content-sha256']?.startsWith('STREAMING-');
        const body = chunked ? decodeAwsChunked(raw) : raw;
        const declared =
          headers['x-amz-decoded-content-length'] ?? (chunked ? undefined : headers['content-length']);
        if (declared !== undefined && Number(declared) !== body.length) {
          xmlError(
            res,
            400,
            'IncompleteBody',
            'The request body is shorter than its declared length',
            url.pathname,
          );
          return;
        }
        const sha = headers['x-amz-content-sha256'];
        if (sha && /^[0-9a-f]{64}$/.test(sha) && createHash('sha256').update(body).digest('hex') !== sha) {
          xmlError(
            res,
            400,
            'XAmzContentSHA256Mismatch',
            'The provided x-amz-content-sha256 does not match',
            url.pathname,
          );
          return;
        }
        objects.set(key, body);
        res.writeHead(200, { etag: `"${createHash('md5').update(body).digest('hex')}"` });
        res.end();
        return;
      }
      case 'GET':
      case 'HEAD': {
        const body = objects.get(key);
        if (!body) {
          xmlError(res, 404, 'NoSuchKey', 'The specified key does not exist.', url.pathname);
          return;
        }
        res.writeHead(200, {
          'content-type': 'application/octet-stream',
          'content-length': body.length,
          etag: `"${createHash('md5').update(body).digest('hex')}"`,
          'last-modified': new Date().toUTCString(),
        });
        res.end(req.method === 'HEAD' ? undefined : body);
        return;
      }
      case 'DELETE':
        objects.delete(key);
        res.writeHead(204);
        res.end();
        return;
      default:
        xmlError(res, 405, 'MethodNotAllowed', 'The specified method is not allowed', url.pathname);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    bucket,
    accessKeyId,
    secretAccessKey,
    objects,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The gateway's environment for a bucket on this simulator. */
export function s3Env(s3: S3Simulator, prefix = ''): Record<string, string> {
  return {
    GATEWAY_BLOB_STORE: 's3',
    S3_BUCKET: s3.bucket,
    S3_ENDPOINT: s3.url,
    S3_REGION: 'us-east-1',
    S3_ACCESS_KEY_ID: s3.accessKeyId,
    S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    S3_PREFIX: prefix,
  };
}
