/**
 * The runtime's OpenTelemetry bridge (createBrood `telemetry`). Present only when configured; every
 * entry point is contained: a tracer, meter or exporter that throws is reported to onDiagnostic and
 * never reaches a turn.
 */
import type { Attributes, Histogram, Meter as OtelMeter, Tracer as OtelTracer } from '@opentelemetry/api';
import { DEFAULTS } from '../defaults.js';
import { errorMessage } from '../errors.js';
import type { SessionEvent } from '../types.js';
import { broodVersion } from '../version.js';
import type { TelemetryOptions } from './options.js';
import { loadTelemetryApi, type Otel, requireTelemetryPeer } from './peer.js';
import { traceHeadersOf } from './propagation.js';
import { type AgentFacts, type ChildOrigin, SpanBuilder } from './spans.js';

/** The tool call a piece of parent-side work runs for (a subagent start reads which call started it). */
export interface CallScope {
  agentId: string;
  callId: string;
}

export interface TelemetryDeps {
  report(message: string): void;
  /** The HTTP server of a model provider (for server.address/server.port), if it has one. */
  serverOf(provider: string): { address: string; port: number } | undefined;
  /** The runtime's runner ('worker', 'inline', 'queue'): where drivers run unless a descriptor says otherwise. */
  driver: string;
}

export class Telemetry {
  readonly propagate: boolean;
  private readonly loading: Promise<void>;
  private api: Otel | undefined;
  private spans: SpanBuilder | undefined;
  /**
   * The tool call whose execute() is running synchronously right now (agent and call id, two fields:
   * every tool call of every agent passes here, and few start a child). A subagent start reads it at
   * its synchronous entry (brood's delegation tools start children before their first await), which
   * costs nothing per promise, unlike an AsyncLocalStorage (in Node 20 it hooks every promise the
   * process makes).
   */
  private runningAgent: string | undefined;
  private runningCallId = '';
  /** The call that made each subagent start request (read when the child's run is published). */
  private readonly starts = new WeakMap<object, CallScope>();
  /** The call that last sent a continuable child a message (its next run links to it). */
  private readonly wakes = new Map<string, CallScope>();

  /** Throws INVALID_CONFIG when @opentelemetry/api is not installed. */
  constructor(
    private readonly options: TelemetryOptions,
    private readonly deps: TelemetryDeps,
  ) {
    requireTelemetryPeer();
    this.propagate = options.propagate ?? DEFAULTS.telemetry.propagate;
    this.loading = loadTelemetryApi().then(
      (api) => this.start(api),
      (error: unknown) => deps.report(`telemetry: @opentelemetry/api failed to load: ${errorMessage(error)}`),
    );
  }

  /** Resolves once spans can be built (createAgent and resumeAgent wait for it). */
  ready(): Promise<void> {
    return this.loading;
  }

  /** The host's active context is the parent of the turn that will claim this message. */
  hostMessage(agent: AgentFacts, messageId: string): void {
    this.guard('hostMessage', () => {
      if (this.api && this.spans) this.spans.hostMessage(agent, messageId, this.api.context.active());
    });
  }

  /** `published`: false for what an agent's log gets before it runs (a fork's seed is its parent's work). */
  logged(agent: AgentFacts, stamped: readonly SessionEvent[], published = true): void {
    // Every batch of every agent comes through here: no closure per call, unlike guard().
    if (this.spans === undefined) return;
    try {
      this.spans.logged(agent, stamped, published);
    } catch (error) {
      this.reportFailure('span', error);
    }
  }

  /**
   * A parent started a run of a child: foreground runs nest under the call that made `request`, others
   * link to it; a continuable child's run links to the call that woke it.
   */
  childStarted(child: AgentFacts, mode: ChildOrigin['mode'], provider: string, request?: object): void {
    const { spans } = this;
    if (spans === undefined) return;
    const scope = request === undefined ? this.wakes.get(child.id) : this.starts.get(request);
    if (request === undefined) this.wakes.delete(child.id);
    try {
      const call = scope?.agentId === child.parentId && scope ? spans.callSpan(scope.agentId, scope.callId) : undefined;
      spans.childStarted({ mode, provider, call }, child);
    } catch (error) {
      this.reportFailure('childStarted', error);
    }
  }

  /** Runs `work`, the synchronous part of tool call `callId` of `agentId` (what a subagent start in it reads). */
  withCall<T>(agentId: string, callId: string, work: () => T): T {
    const outerAgent = this.runningAgent;
    const outerCallId = this.runningCallId;
    this.runningAgent = agentId;
    this.runningCallId = callId;
    try {
      return work();
    } finally {
      this.runningAgent = outerAgent;
      this.runningCallId = outerCallId;
    }
  }

  /** The call running now, if any (read by a subagent start or followup at its synchronous entry). */
  runningCall(): CallScope | undefined {
    const agentId = this.runningAgent;
    return agentId === undefined ? undefined : { agentId, callId: this.runningCallId };
  }

  /** `request` starts a child for the call running now (read at the start's synchronous entry). */
  startedBy(request: object): void {
    const scope = this.runningCall();
    if (scope !== undefined) this.starts.set(request, scope);
  }

  /** A continuable child was sent a message by `call`: its next run links to it. */
  wokenBy(childId: string, call: CallScope | undefined): void {
    if (call !== undefined) this.wakes.set(childId, call);
  }

  /** A call from inside a run_code program; the returned function ends its span. */
  codeCall(agent: AgentFacts, name: string, callId: string): (isError: boolean, errorType?: string) => void {
    let end: ((isError: boolean, errorType?: string) => void) | undefined;
    this.guard('codeCall', () => {
      end = this.spans?.codeCall(agent, name, callId);
    });
    return (isError, errorType) => this.guard('codeCall', () => end?.(isError, errorType));
  }

  /** W3C trace context of the agent's running turn, for outgoing requests (undefined without `propagate`). */
  traceHeaders(agentId: string): Record<string, string> | undefined {
    if (!this.propagate || this.spans === undefined) return undefined;
    try {
      const span = this.spans.turnSpan(agentId);
      return span === undefined ? undefined : traceHeadersOf(span.spanContext());
    } catch (error) {
      this.reportFailure('propagation', error);
      return undefined;
    }
  }

  forget(agentId: string): void {
    this.wakes.delete(agentId);
    try {
      this.spans?.forget(agentId);
    } catch (error) {
      this.reportFailure('forget', error);
    }
  }

  private start(api: Otel): void {
    this.guard('setup', () => {
      const tracer = this.tracerOf(api);
      const metrics = this.options.meter === undefined ? undefined : new ChatMetrics(this.options.meter as OtelMeter);
      const captureContent = this.options.captureContent ?? DEFAULTS.telemetry.captureContent;
      // Without a meter there is no hook: a chat span then costs nothing for metrics.
      const hooks =
        metrics === undefined
          ? {}
          : {
              chatEnded: (attributes: Attributes, seconds: number, usage?: { input: number; output: number }) =>
                this.guard('metrics', () => metrics.record(attributes, seconds, usage)),
            };
      this.spans = new SpanBuilder(api, tracer, captureContent, this.deps.serverOf, this.deps.driver, hooks);
      this.api = api;
    });
  }

  private tracerOf(api: Otel): OtelTracer {
    const { tracer, tracerProvider } = this.options;
    if (tracer !== undefined) return tracer as OtelTracer;
    const provider = tracerProvider ?? api.trace.getTracerProvider();
    return provider.getTracer(DEFAULTS.telemetry.tracerName, broodVersion()) as OtelTracer;
  }

  private guard(what: string, work: () => void): void {
    try {
      work();
    } catch (error) {
      this.reportFailure(what, error);
    }
  }

  private reportFailure(what: string, error: unknown): void {
    this.deps.report(`telemetry (${what}) failed: ${errorMessage(error)}`);
  }
}

/** The GenAI client metrics: request duration and token usage histograms. */
class ChatMetrics {
  private readonly duration: Histogram;
  private readonly tokens: Histogram;

  constructor(meter: OtelMeter) {
    this.duration = meter.createHistogram('gen_ai.client.operation.duration', {
      unit: 's',
      description: 'GenAI operation duration',
    });
    this.tokens = meter.createHistogram('gen_ai.client.token.usage', {
      unit: '{token}',
      description: 'Measures number of input and output tokens used',
    });
  }

  record(attributes: Attributes, seconds: number, usage: { input: number; output: number } | undefined): void {
    this.duration.record(seconds, attributes);
    if (usage === undefined) return;
    this.tokens.record(usage.input, { ...attributes, 'gen_ai.token.type': 'input' });
    this.tokens.record(usage.output, { ...attributes, 'gen_ai.token.type': 'output' });
  }
}
