import { z } from 'zod';
import {
  type CostReportCall,
  type CostReportRow,
  dayWindow,
  decimalToNanos,
} from '../../contracts/cost-report.ts';
import { UpstreamError } from '../errors.ts';
import { endpointUrl, getUpstream } from '../http.ts';
import { parseReply } from '../reply.ts';

const VERSION = '2023-06-01';
const MAX_PAGES = 50;

const Page = z.object({
  data: z.array(
    z.object({
      starting_at: z.string(),
      ending_at: z.string(),
      results: z.array(
        z.object({
          /** Lowest currency units (cents) as a decimal string: "123.45" is $1.2345. */
          amount: z.string(),
          currency: z.string(),
          model: z.string().nullable().optional(),
          workspace_id: z.string().nullable().optional(),
        }),
      ),
    }),
  ),
  has_more: z.boolean(),
  next_page: z.string().nullable().optional(),
});

/**
 * Anthropic's Admin API cost report, `GET {base}/v1/organizations/cost_report` with the admin key in `x-api-key`:
 * daily buckets grouped by `workspace_id` and `description` (which fills `model`, `token_type`, `context_window`),
 * paged by `next_page`. Amounts are decimal strings of cents; a null workspace is the default one.
 */
export async function anthropicCostReport(call: CostReportCall): Promise<CostReportRow[]> {
  const { start, end } = dayWindow(call.day);
  const rows: CostReportRow[] = [];
  let page: string | undefined;
  for (let n = 0; n < MAX_PAGES; n++) {
    const query = new URLSearchParams({
      starting_at: start.toISOString(),
      ending_at: end.toISOString(),
      bucket_width: '1d',
      limit: '1',
    });
    query.append('group_by[]', 'workspace_id');
    query.append('group_by[]', 'description');
    if (page) query.set('page', page);
    const response = await getUpstream({
      url: endpointUrl(call.baseUrl, `/v1/organizations/cost_report?${query}`),
      headers: { 'x-api-key': call.adminKey, 'anthropic-version': VERSION },
      timeoutMs: call.timeoutMs,
      signal: call.signal,
    });
    const reply = await parseReply(response, Page, 'a cost report');
    for (const bucket of reply.data) {
      if (new Date(bucket.starting_at).getTime() !== start.getTime()) continue;
      for (const result of bucket.results) {
        if (result.currency.toUpperCase() !== 'USD')
          throw new UpstreamError('server', `the cost report is in ${result.currency}, not USD`);
        rows.push({
          group: result.workspace_id ?? null,
          model: result.model ?? null,
          nanos: decimalToNanos(result.amount, 7),
        });
      }
    }
    if (!reply.has_more) return rows;
    if (!reply.next_page) throw new UpstreamError('server', 'the provider said has_more without a next_page');
    page = reply.next_page;
  }
  throw new UpstreamError('server', `the cost report ran past ${MAX_PAGES} pages`);
}
