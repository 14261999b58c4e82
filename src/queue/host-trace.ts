/**
 * `brood host --telemetry`: each activation the host runs is a span in the host's own tracing (the
 * global tracer provider its process registered, e.g. with `node --import`), continuing the trace of
 * the parent turn whose W3C context the queued plan carries. Drivers still run without OpenTelemetry.
 */
import type * as OtelApi from '@opentelemetry/api';
import type { Span, SpanContext } from '@opentelemetry/api';
import { errorMessage } from '../errors.js';
import { broodVersion } from '../version.js';
import type { ActivationEnd } from '../wire/runner.js';
import type { RemotePlan } from './job.js';

const CONSUMER = 4;
const ERROR = 2;

export class HostTracing {
  private constructor(
    private readonly api: typeof OtelApi,
    private readonly log: (line: string) => void,
  ) {}

  static async load(log: (line: string) => void): Promise<HostTracing> {
    const api = (await import('@opentelemetry/api')) as typeof OtelApi & { default?: typeof OtelApi };
    return new HostTracing(typeof api.context?.active === 'function' ? api : (api.default ?? api), log);
  }

  /** Starts the activation's span under the parent's turn (when the plan names one); never throws. */
  activation(plan: RemotePlan): { end(outcome: ActivationEnd | undefined): void } {
    let span: Span | undefined;
    try {
      const { trace, ROOT_CONTEXT } = this.api;
      const remote = spanContextOf(plan.firstMessage?.traceHeaders);
      const parent = remote === undefined ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, remote);
      span = trace
        .getTracer('brood', broodVersion())
        .startSpan(
          `brood.host activation ${plan.agentId}`,
          { kind: CONSUMER, attributes: { 'messaging.system': 'bullmq', 'gen_ai.agent.id': plan.agentId } },
          parent,
        );
    } catch (error) {
      this.log(`brood host: telemetry failed: ${errorMessage(error)}`);
    }
    return {
      end: (outcome) => {
        try {
          if (outcome?.kind === 'failed')
            span?.setStatus({ code: ERROR }).setAttribute('error.type', outcome.stopReason);
          span?.end();
        } catch (error) {
          this.log(`brood host: telemetry failed: ${errorMessage(error)}`);
        }
      },
    };
  }
}

/** The span context a `traceparent` names (undefined when absent or malformed). */
export function spanContextOf(headers: Readonly<Record<string, unknown>> | undefined): SpanContext | undefined {
  const value = headers?.traceparent;
  if (typeof value !== 'string') return undefined;
  const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(value.trim());
  if (match === null) return undefined;
  const [, traceId = '', spanId = '', flags = '00'] = match;
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  return { traceId, spanId, traceFlags: Number.parseInt(flags, 16), isRemote: true };
}
