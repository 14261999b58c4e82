/**
 * The parent contexts brood hands the tracer: a context that holds one span over another context. The
 * api's own (`trace.setSpan`) copies its parent's Map and makes three closures per context; brood makes
 * two per child turn, kept as long as the turn runs. This one is two fields: it answers the span key
 * itself and asks its parent for anything else, and builds the api's context only when written to.
 */
import type { Context, Span } from '@opentelemetry/api';
import type { Otel } from './peer.js';

/** The api's span key: a registered symbol, the same in every copy of @opentelemetry/api 1.x. */
const SPAN_KEY = Symbol.for('OpenTelemetry Context Key SPAN');

class SpanOverContext implements Context {
  constructor(
    private readonly parent: Context,
    private readonly span: Span,
    private readonly api: Otel,
  ) {}

  getValue(key: symbol): unknown {
    return key === SPAN_KEY ? this.span : this.parent.getValue(key);
  }

  setValue(key: symbol, value: unknown): Context {
    return this.api.trace.setSpan(this.parent, this.span).setValue(key, value);
  }

  deleteValue(key: symbol): Context {
    return this.api.trace.setSpan(this.parent, this.span).deleteValue(key);
  }
}

/**
 * `trace.setSpan` for brood's parent contexts. The api's own is used if it ever stops finding the span
 * under the registered key (checked once, when telemetry starts).
 */
export function spanSetter(api: Otel): (parent: Context, span: Span) => Context {
  const probe = api.trace.wrapSpanContext(api.INVALID_SPAN_CONTEXT);
  const light = (parent: Context, span: Span): Context => new SpanOverContext(parent, span, api);
  return api.trace.getSpan(light(api.ROOT_CONTEXT, probe)) === probe
    ? light
    : (parent, span) => api.trace.setSpan(parent, span);
}
