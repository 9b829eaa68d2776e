import { z } from 'zod';
import {
  type CostReportCall,
  type CostReportRow,
  dayWindow,
  dollarsToNanosExact,
} from '../../contracts/cost-report.ts';
import { UpstreamError } from '../errors.ts';
import { endpointUrl, getUpstream } from '../http.ts';
import { parseReply } from '../reply.ts';

const MAX_PAGES = 50;

const Page = z.object({
  data: z.array(
    z.object({
      start_time: z.number(),
      end_time: z.number(),
      results: z.array(
        z.object({
          amount: z.object({ value: z.number(), currency: z.string() }),
          line_item: z.string().nullable().optional(),
          project_id: z.string().nullable().optional(),
        }),
      ),
    }),
  ),
  has_more: z.boolean(),
  next_page: z.string().nullable().optional(),
});

/**
 * OpenAI's organization Costs API, `GET {base}/organization/costs` with the admin key as bearer: daily buckets
 * (`bucket_width=1d`, the only width), grouped by `project_id` and `line_item`, paged by `next_page`. A line item
 * reads `<model>, <kind>` (`gpt-4o-mini-2024-07-18, cached input`); the model is what precedes the last comma.
 * Amounts are JSON numbers of dollars.
 */
export async function openAiCostReport(call: CostReportCall): Promise<CostReportRow[]> {
  const { start, end } = dayWindow(call.day);
  const rows: CostReportRow[] = [];
  let page: string | undefined;
  for (let n = 0; n < MAX_PAGES; n++) {
    const query = new URLSearchParams({
      start_time: String(start.getTime() / 1000),
      end_time: String(end.getTime() / 1000),
      bucket_width: '1d',
      limit: '1',
    });
    query.append('group_by', 'project_id');
    query.append('group_by', 'line_item');
    if (page) query.set('page', page);
    const response = await getUpstream({
      url: endpointUrl(call.baseUrl, `/organization/costs?${query}`),
      headers: { authorization: `Bearer ${call.adminKey}` },
      timeoutMs: call.timeoutMs,
      signal: call.signal,
    });
    const reply = await parseReply(response, Page, 'a cost report');
    for (const bucket of reply.data) {
      if (bucket.start_time * 1000 !== start.getTime()) continue;
      for (const result of bucket.results) {
        if (result.amount.currency.toLowerCase() !== 'usd')
          throw new UpstreamError('server', `the cost report is in ${result.amount.currency}, not usd`);
        const item = result.line_item ?? null;
        const comma = item?.lastIndexOf(', ') ?? -1;
        rows.push({
          group: result.project_id ?? null,
          model: item === null ? null : comma > 0 ? item.slice(0, comma) : item,
          nanos: dollarsToNanosExact(result.amount.value),
        });
      }
    }
    if (!reply.has_more) return rows;
    if (!reply.next_page) throw new UpstreamError('server', 'the provider said has_more without a next_page');
    page = reply.next_page;
  }
  throw new UpstreamError('server', `the cost report ran past ${MAX_PAGES} pages`);
}
