/**
 * W3C Trace Context headers from a span context, formatted here so propagation needs no global
 * propagator (a host that registered none still gets its model requests joined to its traces).
 */
import type { SpanContext } from '@opentelemetry/api';

const VALID_TRACE = /^[0-9a-f]{32}$/;
const VALID_SPAN = /^[0-9a-f]{16}$/;
/** All-zero ids are the W3C spec's invalid ones. */
const INVALID_TRACE = '0'.repeat(32);
const INVALID_SPAN = '0'.repeat(16);

/** `traceparent` (and `tracestate` when the context carries one); undefined for an invalid context. */
export function traceHeadersOf(context: SpanContext): Record<string, string> | undefined {
  const { traceId, spanId, traceFlags } = context;
  if (traceId === INVALID_TRACE || spanId === INVALID_SPAN || !VALID_TRACE.test(traceId) || !VALID_SPAN.test(spanId))
    return undefined;
  const flags = (traceFlags & 0xff).toString(16).padStart(2, '0');
  const headers: Record<string, string> = { traceparent: `00-${traceId}-${spanId}-${flags}` };
  const state = context.traceState?.serialize();
  if (state) headers.tracestate = state;
  return headers;
}
