import client from 'prom-client';

/** How often the watch looks; a turn that kept it waiting past `LONG_TURN_MS` beyond this is measured. */
const TICK_MS = 10;
const LONG_TURN_MS = 50;

/**
 * The event loop's long turns, measured by the CPU time the process used while the loop did not come round.
 * The wall-clock lag (`gateway_nodejs_eventloop_lag_*`) also counts the time the machine gave other processes, so
 * a busy machine reads like a slow gateway; CPU time counts only the process's own work, so a request that holds the
 * loop for seconds shows here whatever else the machine is doing. (Other threads of the process, garbage collection
 * and libuv's pool, count too; a turn is taken as the smaller of its wall time and that CPU time.)
 */
export function watchLoopTurns(registry: client.Registry): void {
  const turns = new client.Histogram({
    name: 'gateway_event_loop_long_turn_cpu_seconds',
    help: `Event-loop turns longer than ${LONG_TURN_MS} ms, by the CPU time the process used in them`,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  let longest = 0;
  new client.Gauge({
    name: 'gateway_event_loop_longest_turn_cpu_seconds',
    help: 'The longest event-loop turn since the process started, by the CPU time the process used in it',
    registers: [registry],
    collect() {
      this.set(longest);
    },
  });
  let lastAt = performance.now();
  let lastCpu = process.cpuUsage();
  setInterval(() => {
    const at = performance.now();
    const cpu = process.cpuUsage(lastCpu);
    const wallMs = at - lastAt;
    if (wallMs > TICK_MS + LONG_TURN_MS) {
      const seconds = Math.min(wallMs, (cpu.user + cpu.system) / 1000) / 1000;
      turns.observe(seconds);
      longest = Math.max(longest, seconds);
    }
    lastAt = at;
    lastCpu = process.cpuUsage();
  }, TICK_MS).unref();
}
