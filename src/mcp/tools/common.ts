import { z } from 'zod';

export const Tag = z
  .string()
  .trim()
  .min(1)
  .max(128)
  .optional()
  .describe('Cost-attribution tag for usage reports and tag budgets (sent as X-GW-Tag)');

export const OptionalModel = z
  .string()
  .min(1)
  .max(200)
  .optional()
  .describe(
    "A model id from list_models (for example 'openai/gpt-4o-mini'); the endpoint's default when left out",
  );

export const RequiredModel = z.string().min(1).max(200).describe('A model id from list_models');

export const Month = z
  .string()
  .regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'a month as YYYY-MM')
  .optional()
  .describe('A UTC month as YYYY-MM; the current one when left out');

export const Id = (what: string) => z.string().min(1).max(200).describe(what);
