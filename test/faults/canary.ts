import { request } from 'node:http';

// A canary of its own process, so that the load generator's event loop does not pollute what it measures:
// `canary.ts URL PATH KEY DURATION_MS INTERVAL_MS` asks PATH one request at a time and prints each latency (ms)
// as a JSON array when done. A request that fails or takes over 10 s counts as 10,000 ms.
const [url = '', path = '/v1/balance', key = '', durationArg = '10000', intervalArg = '50'] =
  process.argv.slice(2);
const deadline = Date.now() + Number(durationArg);
const { hostname, port } = new URL(url);

const once = () =>
  new Promise<number>((resolve) => {
    const started = performance.now();
    const req = request(
      { host: hostname, port, path, headers: { authorization: `Bearer ${key}` } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200 ? performance.now() - started : 10_000));
      },
    );
    req.setTimeout(10_000, () => req.destroy());
    req.on('error', () => resolve(10_000));
    req.end();
  });

const latencies: number[] = [];
while (Date.now() < deadline) {
  latencies.push(await once());
  await new Promise((r) => setTimeout(r, Number(intervalArg)));
}
process.stdout.write(JSON.stringify(latencies));
