import { fromEvent, Observable, take } from 'rxjs';

/** Emits once when the signal aborts (at once if it already has). */
export function abortSignalEvent(signal: AbortSignal): Observable<unknown> {
  if (signal.aborted) return new Observable((subscriber) => subscriber.next(undefined));
  return fromEvent(signal, 'abort').pipe(take(1));
}
