import type { Server } from 'node:http';

/**
 * Whether clients are being served: a request in flight, or one that ended less than `idleMs` ago. Background
 * work that shares the process with live traffic (shadow comparisons) asks this to stay out of its way.
 */
export function trackTraffic(server: Server, idleMs = 100): () => boolean {
  let inFlight = 0;
  let last = Number.NEGATIVE_INFINITY;
  server.on('request', (_request, response) => {
    inFlight += 1;
    last = performance.now();
    response.once('close', () => {
      inFlight -= 1;
      last = performance.now();
    });
  });
  return () => inFlight > 0 || performance.now() - last < idleMs;
}
