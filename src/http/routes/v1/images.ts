import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { LiveAccounts } from '../../../accounts/live-state.ts';
import { RequestRefused } from '../../../contracts/errors.ts';
import { MAX_IMAGE_UPLOAD_BYTES, uploadKey } from '../../../modalities/images/inputs.ts';
import {
  ImageEditFormFields,
  ImageEditJsonRequest,
  ImageGenerationRequest,
  parseBody,
} from '../../../modalities/images/request.ts';
import { createImages, editImages, type ImagesDeps } from '../../../modalities/images/service.ts';
import { callContext, servedHeaders } from '../../served.ts';
import { receiveMultipart, TAKES_FILES } from '../../uploads.ts';

/** A JSON edit carries its image as base64: room for a 25 MB image (4/3 larger encoded) and a small mask. */
const JSON_EDIT_BODY_LIMIT = 40 * 1024 * 1024;
const EDIT_OPTIONS = { bodyLimit: JSON_EDIT_BODY_LIMIT, config: TAKES_FILES };

export const imagesRoutes =
  (deps: ImagesDeps, live: LiveAccounts): FastifyPluginAsyncZod =>
  async (app) => {
    app.post('/images/generations', { schema: { body: ImageGenerationRequest } }, async (request, reply) => {
      const served = await createImages(deps, callContext(request, reply, live), request.body);
      servedHeaders(reply, served);
      return served.result;
    });

    // JSON or multipart/form-data, so the body is checked here rather than by a route schema.
    app.post('/images/edits', EDIT_OPTIONS, async (request, reply) => {
      const context = callContext(request, reply, live);
      if (!request.isMultipart()) {
        const body = parseBody(ImageEditJsonRequest, request.body);
        const served = await editImages(deps, context, body, { json: body });
        servedHeaders(reply, served);
        return served.result;
      }
      const form = await receiveMultipart(request, deps.blobs, {
        // `image[]` is how OpenAI's SDKs name the field when given a list of images.
        files: {
          image: MAX_IMAGE_UPLOAD_BYTES,
          'image[]': MAX_IMAGE_UPLOAD_BYTES,
          mask: MAX_IMAGE_UPLOAD_BYTES,
        },
        keyOf: uploadKey,
      });
      try {
        const fields = parseBody(ImageEditFormFields, form.fields);
        const image = form.files.image ?? form.files['image[]'];
        if (!image) {
          throw new RequestRefused('invalid', "'image': required: send the image to edit as a file");
        }
        const served = await editImages(deps, context, fields, { image, mask: form.files.mask });
        servedHeaders(reply, served);
        return served.result;
      } finally {
        await form.discard();
      }
    });
  };
