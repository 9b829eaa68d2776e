import { type Attributes, context, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';

/**
 * OpenTelemetry spans through the API package alone: without an SDK registered by the operator (docs/operations.md,
 * Traces) every call here is a no-op, so tracing costs nothing unless configured.
 */
export const tracer = () => trace.getTracer('model-gateway');

/** Runs `work` inside a client span (an upstream call), ending it with the outcome. */
export async function inClientSpan<T>(
  name: string,
  attributes: Attributes,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  return tracer().startActiveSpan(name, { kind: SpanKind.CLIENT, attributes }, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** A server span for one HTTP request, and the context its handler runs in (so upstream spans are its children). */
export function startServerSpan(
  name: string,
  attributes: Attributes,
): { span: Span; run: (fn: () => void) => void } {
  const span = tracer().startSpan(name, { kind: SpanKind.SERVER, attributes });
  const active = trace.setSpan(context.active(), span);
  return { span, run: (fn) => context.with(active, fn) };
}

export { SpanStatusCode };
