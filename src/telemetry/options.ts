/**
 * createBrood's `telemetry` option: the host's own OpenTelemetry objects. brood never creates a
 * tracer provider or exporter; it asks the host's provider for tracer 'brood' or uses the given tracer.
 */
import { z } from 'zod';

// Structural stand-ins for @opentelemetry/api's Tracer, TracerProvider and Meter: brood's published
// declarations must compile for hosts that do not install the optional peer. The api's own objects
// satisfy them.
/** An @opentelemetry/api `Tracer`. */
export interface Tracer {
  startSpan(name: string, options?: never, context?: never): unknown;
}
/** An @opentelemetry/api `TracerProvider`. */
export interface TracerProvider {
  getTracer(name: string, version?: string): Tracer;
}
/** An @opentelemetry/api `Meter`. */
export interface Meter {
  createHistogram(name: string, options?: never): unknown;
}

export interface TelemetryOptions {
  /** From @opentelemetry/api; or give `tracerProvider`. */
  tracer?: Tracer;
  /** brood asks it for tracer 'brood' with its version. */
  tracerProvider?: TracerProvider;
  /** Optional metrics: gen_ai.client.operation.duration and gen_ai.client.token.usage histograms. */
  meter?: Meter;
  /** Prompts, outputs, tool arguments and results as span attributes (default false). */
  captureContent?: boolean;
  /** W3C traceparent/tracestate into outgoing model requests and ACP/queue hosts (default true). */
  propagate?: boolean;
}

const hasMethod = (name: string) => (value: unknown) =>
  typeof value === 'object' && value !== null && typeof (value as Record<string, unknown>)[name] === 'function';

export const telemetryOptionsSchema = z
  .strictObject({
    tracer: z.custom<Tracer>(hasMethod('startSpan'), 'a Tracer (an object with startSpan)').optional(),
    tracerProvider: z
      .custom<TracerProvider>(hasMethod('getTracer'), 'a TracerProvider (an object with getTracer)')
      .optional(),
    meter: z.custom<Meter>(hasMethod('createHistogram'), 'a Meter (an object with createHistogram)').optional(),
    captureContent: z.boolean().optional(),
    propagate: z.boolean().optional(),
  })
  .refine((options) => !(options.tracer !== undefined && options.tracerProvider !== undefined), {
    message: 'give tracer or tracerProvider, not both',
  });
