import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { StoredFilePurpose } from '../../../../events/file.ts';
import { RequestRefused } from '../../../contracts/errors.ts';
import type { FilesService } from '../../../files/service.ts';
import { queryInteger } from '../../query.ts';
import { receiveMultipart, TAKES_FILES } from '../../uploads.ts';

const Id = z.object({ id: z.string().min(1).max(200) });
const ListQuery = z.object({
  purpose: StoredFilePurpose.optional(),
  limit: queryInteger(1, 10_000).default(10_000),
  after: z.string().min(1).optional(),
  order: z.enum(['asc', 'desc']).default('desc'),
});

/** OpenAI's Files API: multipart upload, list, retrieve, delete, and the raw bytes. */
export const filesRoutes =
  (files: FilesService): FastifyPluginAsyncZod =>
  async (app) => {
    app.post('/files', { config: TAKES_FILES }, async (request) => {
      if (!request.isMultipart()) {
        throw new RequestRefused('invalid', "'file': send multipart/form-data with file and purpose");
      }
      return files.upload(request, receiveMultipart);
    });
    app.get('/files', { schema: { querystring: ListQuery } }, (request) =>
      files.list(request.auth, request.query),
    );
    app.get('/files/:id', { schema: { params: Id } }, (request) =>
      files.get(request.auth, request.params.id),
    );
    app.delete('/files/:id', { schema: { params: Id } }, (request) =>
      files.delete(request.auth, request.params.id, request.id),
    );
    app.get('/files/:id/content', { schema: { params: Id } }, async (request, reply) => {
      const content = await files.content(request.auth, request.params.id);
      return reply
        .header('content-type', content.contentType)
        .header('content-length', String(content.bytes))
        .send(content.body);
    });
  };
