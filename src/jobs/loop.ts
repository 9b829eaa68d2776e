import { every } from '../workers/index.ts';
import { JobWorker, type JobWorkerDeps } from './worker.ts';

/** Runs the job worker every `intervalMs` until stopped; every instance may run one (claims are events). */
export function startJobWorker(
  deps: JobWorkerDeps,
  intervalMs: number,
): { worker: JobWorker; stop(): Promise<void> } {
  const worker = new JobWorker(deps);
  const controller = new AbortController();
  const loop = every(
    intervalMs,
    () => worker.tick(),
    controller.signal,
    (error) => deps.log(`job worker failed: ${String(error)}`),
  );
  return {
    worker,
    async stop() {
      controller.abort();
      await loop;
    },
  };
}
