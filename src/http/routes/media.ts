import type { FastifyPluginAsync } from 'fastify';
import { RequestRefused } from '../../contracts/errors.ts';
import type { BlobStore } from '../../files/blob-store.ts';
import { contentTypeOf, type MediaUrls } from '../../media/signed-urls.ts';

/**
 * The media host: bytes behind a signed URL, with no key. A wrong signature and an unknown key read the same
 * (403), so the route does not reveal which files exist.
 */
export const mediaRoutes =
  (blobs: BlobStore, urls: MediaUrls): FastifyPluginAsync =>
  async (app) => {
    app.get<{ Params: { '*': string }; Querystring: { expires?: string; signature?: string } }>(
      '/*',
      async (request, reply) => {
        const key = request.params['*'];
        const verdict = urls.verify(key, request.query.expires, request.query.signature);
        if (verdict === 'expired') throw new RequestRefused('forbidden', 'This signed URL has expired');
        if (verdict === 'invalid') throw new RequestRefused('forbidden', 'Invalid signature for this URL');
        const bytes = await blobs.size(key);
        if (bytes === undefined) throw new RequestRefused('not_found', 'The file no longer exists');
        const filename = key.split('/').pop() ?? 'file';
        return reply
          .header('content-type', contentTypeOf(filename))
          .header('content-length', String(bytes))
          .header('cache-control', 'private, max-age=300')
          .send(blobs.read(key));
      },
    );
  };
