/**
 * OpenTelemetry for tests: an in-memory span exporter behind a simple processor, a context manager on
 * AsyncLocalStorage (the api's default one keeps no context), and helpers to read the span tree.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { type Context, type ContextManager, context, ROOT_CONTEXT } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

class StorageContextManager implements ContextManager {
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
    return this.storage.run(ctx, () => fn.call(thisArg, ...args));
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.storage.disable();
    return this;
  }
}

let installed = false;
/** Makes `context.with()` work for the test file (the api keeps one global manager per process). */
export function installContextManager(): void {
  if (installed) return;
  installed = context.setGlobalContextManager(new StorageContextManager());
}

export function memoryTracing(): { provider: BasicTracerProvider; exporter: InMemorySpanExporter } {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { provider, exporter };
}

export const parentIdOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;

/** The spans whose parent is `parent` (by span id). */
export function childrenOf(spans: readonly ReadableSpan[], parent: ReadableSpan): ReadableSpan[] {
  return spans.filter((span) => parentIdOf(span) === parent.spanContext().spanId);
}

export function spanNamed(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const found = spans.filter((span) => span.name === name);
  if (found.length !== 1) throw new Error(`expected one span '${name}', found ${found.length}`);
  return found[0] as ReadableSpan;
}
