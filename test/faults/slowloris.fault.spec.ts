import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FaultGateway, percentile, round, send, startFaultGateway } from './fault-gateway.ts';

/**
 * 200 slow clients at once: some drip their headers, some their bodies (with and without a valid key), a byte
 * or a line a second, as a slowloris attack does. Meanwhile a normal client keeps asking. The gateway's deadlines
 * (src/http/edge.ts, checked every second) are set shorter than their defaults of 15 s and 30 s, so that the
 * attack lasts seconds rather than half a minute; the header deadline plus the slack below stays short of the
 * body's, so a header drip let run to the body's deadline would still fail the test.
 */
const HEADER_DRIPS = 60;
const BODY_DRIPS = 100;
const UNAUTHENTICATED_BODY_DRIPS = 40;
const HEADERS_DEADLINE_MS = 5_000;
const BODY_DEADLINE_MS = 12_000;
/** Past the body deadline, with the server's one-second check and some slack for a loaded machine. */
const RUN_MS = BODY_DEADLINE_MS + 5_000;
const PROBE_P99_MS = 250;

interface Drip {
  kind: 'headers' | 'body' | 'body-unauthenticated';
  socket: Socket;
  openedAt: number;
  closedAt?: number;
  answer: string;
}

describe('slowloris: 200 sockets dripping headers and bodies', () => {
  let gateway: FaultGateway;

  beforeAll(async () => {
    gateway = await startFaultGateway({
      GATEWAY_HEADERS_TIMEOUT_MS: String(HEADERS_DEADLINE_MS),
      GATEWAY_BODY_TIMEOUT_MS: String(BODY_DEADLINE_MS),
    });
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  function open(kind: Drip['kind']): Drip {
    const { hostname, port } = new URL(gateway.url);
    const socket = connect({ host: hostname, port: Number(port) });
    const drip: Drip = { kind, socket, openedAt: Date.now(), answer: '' };
    socket.on('data', (chunk) => {
      drip.answer += chunk.toString();
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      drip.closedAt ??= Date.now();
    });
    const auth = kind === 'body-unauthenticated' ? '' : `Authorization: Bearer ${gateway.key}\r\n`;
    socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\n${auth}`);
    if (kind !== 'headers') {
      socket.write(
        'Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{"model":"local/echo","messages":[',
      );
    }
    let n = 0;
    const timer = setInterval(() => {
      if (socket.destroyed) return clearInterval(timer);
      socket.write(kind === 'headers' ? `X-Drip-${n++}: ${'a'.repeat(10)}\r\n` : ' ');
    }, 1_000);
    socket.on('close', () => clearInterval(timer));
    return drip;
  }

  it('keeps answering other clients promptly, and closes every slow socket at its deadline', async () => {
    const started = Date.now();
    const drips = [
      ...Array.from({ length: HEADER_DRIPS }, () => open('headers')),
      ...Array.from({ length: BODY_DRIPS }, () => open('body')),
      ...Array.from({ length: UNAUTHENTICATED_BODY_DRIPS }, () => open('body-unauthenticated')),
    ];
    const probes: number[] = [];
    const failedProbes: string[] = [];
    while (Date.now() - started < RUN_MS && drips.some((d) => d.closedAt === undefined)) {
      try {
        const answer = await send(gateway.url, {
          method: 'GET',
          path: '/v1/balance',
          headers: { authorization: `Bearer ${gateway.key}` },
          timeoutMs: 10_000,
        });
        probes.push(answer.ms);
        if (answer.status !== 200) failedProbes.push(`${answer.status} ${answer.text.slice(0, 100)}`);
      } catch (error) {
        failedProbes.push(String(error));
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    const stillOpen = drips.filter((d) => d.closedAt === undefined);
    for (const d of stillOpen) d.socket.destroy();

    const byKind = (kind: Drip['kind']) => {
      const mine = drips.filter((d) => d.kind === kind);
      const lives = mine.flatMap((d) => (d.closedAt ? [d.closedAt - d.openedAt] : []));
      const statuses = [...new Set(mine.map((d) => /^HTTP\/1\.1 (\d+)/.exec(d.answer)?.[1] ?? 'none'))];
      return { mine, lives, statuses };
    };
    const figures = (['headers', 'body', 'body-unauthenticated'] as const).map((kind) => {
      const { mine, lives, statuses } = byKind(kind);
      return (
        `${kind}: n=${mine.length} closed=${lives.length} answered=${statuses.join('/')} ` +
        `closed_after_s=${round(Math.min(...lives) / 1000)}..${round(Math.max(...lives) / 1000)}`
      );
    });
    console.log(
      `FAULTS slowloris sockets=${drips.length} seconds=${round((Date.now() - started) / 1000)} still_open=${stillOpen.length} ` +
        `probes=${probes.length} probe_failures=${failedProbes.length} probe_p50_ms=${round(percentile(probes, 50))} ` +
        `probe_p99_ms=${round(percentile(probes, 99))} probe_max_ms=${round(Math.max(...probes))}`,
    );
    for (const line of figures) console.log(`FAULTS slowloris ${line}`);
    for (const failure of failedProbes.slice(0, 5)) console.log(`FAULTS slowloris probe failed: ${failure}`);

    expect(failedProbes).toEqual([]);
    expect(percentile(probes, 99)).toBeLessThan(PROBE_P99_MS);
    expect(stillOpen.map((d) => d.kind)).toEqual([]);
    // Headers are cut off at their deadline, not let run to the body's.
    expect(Math.max(...byKind('headers').lives)).toBeLessThan(HEADERS_DEADLINE_MS + 5_000);
  });
});
