import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import {
  type Attributes,
  type Context,
  type ContextManager,
  context,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  type SpanKind,
  type SpanOptions,
  type SpanStatus,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';

/**
 * What an operator's OpenTelemetry SDK does, reduced to recording: a tracer provider that keeps every ended span,
 * and an AsyncLocalStorage context manager (as the Node SDK registers) so that spans started inside another's
 * context become its children.
 */
export interface RecordedSpan {
  name: string;
  kind: SpanKind | undefined;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  attributes: Attributes;
  status: SpanStatus | undefined;
}

class RecordingSpan implements Span {
  private readonly context: SpanContext;
  readonly record: RecordedSpan;
  constructor(
    name: string,
    options: SpanOptions,
    parent: SpanContext | undefined,
    private readonly ended: RecordedSpan[],
  ) {
    this.context = {
      traceId: parent?.traceId ?? randomBytes(16).toString('hex'),
      spanId: randomBytes(8).toString('hex'),
      traceFlags: 1,
    };
    this.record = {
      name,
      kind: options.kind,
      traceId: this.context.traceId,
      spanId: this.context.spanId,
      parentSpanId: parent?.spanId,
      attributes: { ...options.attributes },
      status: undefined,
    };
  }
  spanContext() {
    return this.context;
  }
  setAttribute(key: string, value: Attributes[string]) {
    this.record.attributes[key] = value;
    return this;
  }
  setAttributes(attributes: Attributes) {
    Object.assign(this.record.attributes, attributes);
    return this;
  }
  addEvent() {
    return this;
  }
  addLink() {
    return this;
  }
  addLinks() {
    return this;
  }
  setStatus(status: SpanStatus) {
    this.record.status = status;
    return this;
  }
  updateName(name: string) {
    this.record.name = name;
    return this;
  }
  end() {
    this.ended.push(this.record);
  }
  isRecording() {
    return true;
  }
  recordException() {}
}

class RecordingTracer implements Tracer {
  constructor(private readonly ended: RecordedSpan[]) {}
  startSpan(name: string, options: SpanOptions = {}, ctx: Context = context.active()): Span {
    return new RecordingSpan(name, options, trace.getSpanContext(ctx), this.ended);
  }
  startActiveSpan<F extends (span: Span) => unknown>(name: string, ...args: unknown[]): ReturnType<F> {
    const fn = args.at(-1) as F;
    const options = (typeof args[0] === 'object' ? args[0] : {}) as SpanOptions;
    const span = this.startSpan(name, options);
    return context.with(trace.setSpan(context.active(), span), () => fn(span)) as ReturnType<F>;
  }
}

class AsyncContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.storage.run(ctx, () => fn.apply(thisArg, args));
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable() {
    return this;
  }
  disable() {
    this.storage.disable();
    return this;
  }
}

/** Registers the recorder globally (as an SDK would at start); `spans` fills as spans end. */
export function recordSpans(): { spans: RecordedSpan[]; stop(): void } {
  const spans: RecordedSpan[] = [];
  const provider: TracerProvider = { getTracer: () => new RecordingTracer(spans) };
  const manager = new AsyncContextManager();
  context.setGlobalContextManager(manager);
  trace.setGlobalTracerProvider(provider);
  return {
    spans,
    stop() {
      trace.disable();
      context.disable();
    },
  };
}
