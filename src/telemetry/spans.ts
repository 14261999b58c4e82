/**
 * GenAI spans built in the parent from what every agent's session log records (the drivers' events
 * and the parent's own): `invoke_agent` per turn, `chat` per model request, `execute_tool` per tool
 * call. Nothing of OpenTelemetry runs in pool threads. Times are the clock of whoever did the work:
 * the driver's stamp (`at`) on a model request, its answer and the calls the driver runs itself; the
 * log's stamp (the parent's clock, sub-millisecond) on what the parent did (a turn's claim and end, the
 * calls it runs). So a chat span lasts exactly as long as the driver saw the request take.
 */
import type { Attributes, Context, HrTime, Link, Span, Tracer } from '@opentelemetry/api';
import { epochNow } from '../clock.js';
import type { ChatMessage } from '../models/types.js';
import type { KnownSessionEvent, SessionEventDataMap } from '../sessions/event-types.js';
import type { SessionEvent, StopReason } from '../types.js';
import { type AgentFacts, AgentSpans, type ChildOrigin, type SpanHooks } from './agent-spans.js';
import { outputMessages, requestContent, sentLengths } from './content.js';
import { spanSetter } from './context.js';
import type { Otel } from './peer.js';
import { factTime, hrTimeOf } from './span-times.js';

/** SpanKind and SpanStatusCode values (the api's enums, inlined: they are part of its wire contract). */
const INTERNAL = 0;
const CLIENT = 2;
const ERROR = 2;

export type { AgentFacts, ChildOrigin, SpanHooks };

export class SpanBuilder {
  private readonly agents = new Map<string, AgentSpans>();
  /** trace.setSpan for the contexts brood keeps (see context.ts). */
  private readonly withSpan: (parent: Context, span: Span) => Context;
  private lastServer: { provider: string; server: { address: string; port: number } | undefined } | undefined;

  constructor(
    private readonly api: Otel,
    private readonly tracer: Tracer,
    private readonly captureContent: boolean,
    private readonly serverOf: (provider: string) => { address: string; port: number } | undefined,
    /** The runtime's own runner: 'worker' (the pool), 'inline' or 'queue'. */
    private readonly defaultDriver: string,
    private readonly hooks: SpanHooks = {},
  ) {
    this.withSpan = spanSetter(api);
  }

  /** The host's active context when it handed `messageId` to `agent` (run/send). */
  hostMessage(agent: AgentFacts, messageId: string, context: Context): void {
    const spans = this.spansOf(agent);
    spans.hostContexts ??= new Map();
    spans.hostContexts.set(messageId, context);
  }

  /** A parent started a run of the child `facts` names; `origin.call` is the tool call that did, when known. */
  childStarted(origin: ChildOrigin, facts: AgentFacts): void {
    const spans = this.spansOf(facts);
    // A continuable child keeps the link to the call that created it for all its later runs.
    if (spans.origin === undefined || origin.call !== undefined) spans.origin = origin;
    spans.provider ??= origin.provider;
  }

  /** The current turn's context of an agent (for propagation), if a turn is open. */
  turnContext(agentId: string): Context | undefined {
    return this.agents.get(agentId)?.turn?.context;
  }

  /** The span of an agent's open turn, if any. */
  turnSpan(agentId: string): Span | undefined {
    return this.agents.get(agentId)?.turn?.span;
  }

  /** The open `execute_tool` span of `callId` in `agentId`'s running turn. */
  callSpan(agentId: string, callId: string): Span | undefined {
    const spans = this.agents.get(agentId);
    return spans?.calls.get(callId)?.span ?? spans?.codeCalls?.get(callId);
  }

  /** The latest open `run_code` call of the agent: calls from inside a program are its children. */
  runCodeSpan(agentId: string): Span | undefined {
    let found: Span | undefined;
    for (const call of this.agents.get(agentId)?.calls.values() ?? []) if (call.name === 'run_code') found = call.span;
    return found;
  }

  /** A call from inside a run_code program: a child span of the program's call; returns its end. */
  codeCall(agent: AgentFacts, name: string, callId: string): (isError: boolean, errorType?: string) => void {
    const spans = this.spansOf(agent);
    const parent = this.runCodeSpan(agent.id);
    const base = parent ? this.withSpan(spans.turn?.context ?? this.api.ROOT_CONTEXT, parent) : spans.turn?.context;
    const span = this.startToolSpan(name, callId, base ?? this.api.ROOT_CONTEXT, hrTimeOf(epochNow()));
    spans.codeCalls ??= new Map();
    spans.codeCalls.set(callId, span);
    return (isError, errorType) => {
      spans.codeCalls?.delete(callId);
      if (isError) span.setStatus({ code: ERROR }).setAttribute('error.type', errorType ?? 'tool_error');
      span.end(hrTimeOf(epochNow()));
    };
  }

  /**
   * One stamped batch of `agent`'s log, in order. Before the agent is published only its descriptor
   * counts: the turns a fork's seed copies into its log are its parent's, with spans of their own.
   */
  logged(agent: AgentFacts, stamped: readonly SessionEvent[], published = true): void {
    const spans = this.spansOf(agent);
    if (!published) {
      for (const logged of stamped) if (logged.type === 'subagent/descriptor') this.apply(spans, logged);
      return;
    }
    if (this.captureContent && agent.history !== undefined) this.loggedWithContent(spans, agent.history, stamped);
    else for (const logged of stamped) this.apply(spans, logged);
  }

  /** As logged(), and each model request of the batch learns the history it sent (see content.ts). */
  private loggedWithContent(
    spans: AgentSpans,
    history: readonly ChatMessage[],
    stamped: readonly SessionEvent[],
  ): void {
    let lengths: number[] | undefined;
    for (const [index, logged] of stamped.entries()) {
      if (logged.type === 'model/request') {
        lengths ??= sentLengths(stamped, history.length);
        spans.sentHistory = history.slice(0, lengths[index]);
      }
      this.apply(spans, logged);
      spans.sentHistory = undefined;
    }
  }

  forget(agentId: string): void {
    const spans = this.agents.get(agentId);
    if (spans?.turn) this.endTurn(spans, 'aborted', undefined, epochNow());
    this.agents.delete(agentId);
  }

  private spansOf(facts: AgentFacts): AgentSpans {
    let spans = this.agents.get(facts.id);
    if (spans === undefined) {
      spans = new AgentSpans(facts);
      this.agents.set(facts.id, spans);
    }
    return spans;
  }

  private apply(spans: AgentSpans, logged: SessionEvent): void {
    // The runtime's own log: a type this switch names is brood's own event with that data shape (a
    // foreign type falls through), so there is no lookup in the known-type table per event.
    const event = logged as KnownSessionEvent;
    switch (event.type) {
      case 'subagent/descriptor':
        spans.label = event.data.label;
        spans.driver = event.data.runner;
        spans.provider = event.data.provider;
        return;
      case 'turn/start':
        this.startTurn(spans, event.data.turn, event.data.messageIds[0], event.time);
        return;
      case 'model/request':
        this.startChat(spans, event.data, factTime(event.time, event.data.at));
        return;
      case 'assistant/message':
        this.endChat(spans, event.data, factTime(event.time, event.data.at));
        return;
      case 'tool/call':
        this.startCall(
          spans,
          event.data.callId,
          event.data.name,
          event.data.arguments,
          factTime(event.time, event.data.at),
        );
        return;
      case 'tool/result':
        this.endCall(spans, event.data, factTime(event.time, event.data.at));
        return;
      case 'turn/end':
        this.endTurn(spans, event.data.reason, event.data.diagnostic, event.time);
        return;
      default:
        return;
    }
  }

  private startTurn(spans: AgentSpans, turn: number, messageId: string | undefined, time: number): void {
    const { facts, origin } = spans;
    const hostContext = messageId === undefined ? undefined : spans.hostContexts?.get(messageId);
    if (messageId !== undefined) spans.hostContexts?.delete(messageId);
    const attributes: Attributes = {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.id': facts.id,
      'gen_ai.conversation.id': facts.id,
      'brood.depth': facts.depth,
      'brood.delegation.mode': origin?.mode ?? 'top',
      // The provider that ran the child (spawn, fork, acp, ...); 'host' for an agent the host created.
      'brood.runner': spans.provider ?? 'host',
      'brood.driver': spans.driver ?? this.defaultDriver,
      'brood.turn': turn,
    };
    if (spans.label !== undefined) attributes['gen_ai.agent.name'] = spans.label;
    if (facts.parentId !== undefined) attributes['brood.parent.id'] = facts.parentId;
    let links: Link[] | undefined;
    // A root turn gets ROOT_CONTEXT, which holds no span: the SDK starts a new trace without `root`.
    let parent: Context;
    if (origin === undefined) parent = hostContext ?? this.api.ROOT_CONTEXT;
    else if (origin.mode === 'foreground' && origin.call !== undefined)
      parent = this.withSpan(this.api.ROOT_CONTEXT, origin.call);
    else if (origin.mode === 'foreground')
      // Started by no call brood saw (a host's subagents.start()): under the parent's running turn.
      parent = this.turnContext(facts.parentId ?? '') ?? this.api.ROOT_CONTEXT;
    else {
      // Background and continuable runs outlive the call that started them: a trace of their own.
      parent = this.api.ROOT_CONTEXT;
      if (origin.call !== undefined) links = [{ context: origin.call.spanContext() }];
    }
    const span = this.tracer.startSpan(
      `invoke_agent ${spans.label ?? facts.id}`,
      { kind: INTERNAL, attributes, links, startTime: hrTimeOf(time) },
      parent,
    );
    spans.turn = { span, context: this.withSpan(parent, span), number: turn };
  }

  private startChat(
    spans: AgentSpans,
    request: { provider: string; model: string; system: string },
    time: number,
  ): void {
    if (spans.chat) this.failChat(spans, 'superseded', time);
    const { provider, model } = request;
    spans.chat = {
      provider,
      model,
      start: time,
      content: this.captureContent ? requestContent(request.system, spans.sentHistory) : undefined,
    };
  }

  /**
   * The chat span is built when its request is answered, with everything known in one startSpan and
   * its start time set to the request's: the same span as one started at the request, at one SDK
   * call instead of five (nothing nests under a chat span, so nothing needs it open earlier).
   */
  private endChat(spans: AgentSpans, data: SessionEventDataMap['assistant/message'], time: number): void {
    const chat = spans.chat;
    if (chat === undefined) return;
    spans.chat = undefined;
    // One literal of every key known here (no shape change per added key), the server's after it.
    const attributes: Attributes = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': chat.provider,
      'gen_ai.request.model': chat.model,
      'gen_ai.response.model': chat.model,
      'gen_ai.usage.input_tokens': data.usage.inputTokens,
      'gen_ai.usage.output_tokens': data.usage.outputTokens,
      'gen_ai.response.finish_reasons': [data.finish],
    };
    this.addServer(attributes, chat.provider);
    if (chat.content !== undefined) Object.assign(attributes, chat.content);
    if (this.captureContent) attributes['gen_ai.output.messages'] = outputMessages(data);
    const failed = data.finish === 'error';
    if (failed) attributes['error.type'] = 'error';
    this.endedChat(spans, chat, attributes, failed, time);
    this.hooks.chatEnded?.(this.chatAttributes(chat), (time - chat.start) / 1000, {
      input: data.usage.inputTokens,
      output: data.usage.outputTokens,
    });
  }

  private failChat(spans: AgentSpans, errorType: string, time: number): void {
    const chat = spans.chat;
    if (chat === undefined) return;
    spans.chat = undefined;
    const attributes = this.chatAttributes(chat);
    attributes['error.type'] = errorType;
    // The request was sent, so its content is recorded (not with the metrics: they count, never quote).
    this.endedChat(
      spans,
      chat,
      chat.content === undefined ? attributes : { ...attributes, ...chat.content },
      true,
      time,
    );
    this.hooks.chatEnded?.(attributes, (time - chat.start) / 1000, undefined);
  }

  /** The request's own attributes (also the metrics' attributes). */
  private chatAttributes(chat: { provider: string; model: string }): Attributes {
    const attributes: Attributes = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': chat.provider,
      'gen_ai.request.model': chat.model,
    };
    this.addServer(attributes, chat.provider);
    return attributes;
  }

  /** server.address and server.port of an HTTP adapter's provider (none for in-process models). */
  private addServer(attributes: Attributes, provider: string): void {
    const server = this.serverFor(provider);
    if (server === undefined) return;
    attributes['server.address'] = server.address;
    attributes['server.port'] = server.port;
  }

  /** serverOf for a chat's provider; a run asks for the same provider request after request. */
  private serverFor(provider: string): { address: string; port: number } | undefined {
    if (provider !== this.lastServer?.provider) this.lastServer = { provider, server: this.serverOf(provider) };
    return this.lastServer.server;
  }

  private endedChat(
    spans: AgentSpans,
    chat: { model: string; start: number },
    attributes: Attributes,
    failed: boolean,
    time: number,
  ): void {
    const span = this.tracer.startSpan(
      `chat ${chat.model}`,
      { kind: CLIENT, attributes, startTime: hrTimeOf(chat.start) },
      spans.turn?.context ?? this.api.ROOT_CONTEXT,
    );
    if (failed) span.setStatus({ code: ERROR });
    span.end(hrTimeOf(time));
  }

  private startCall(spans: AgentSpans, callId: string, name: string, args: string, time: number): void {
    const parent = spans.turn?.context ?? this.api.ROOT_CONTEXT;
    const span = this.startToolSpan(name, callId, parent, hrTimeOf(time), this.captureContent ? args : undefined);
    spans.calls.set(callId, { span, name });
  }

  /** `args`: the call's arguments when content is captured (known at start, so given to startSpan). */
  private startToolSpan(name: string, callId: string, parent: Context, time: HrTime, args?: string): Span {
    const attributes: Attributes = {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': name,
      'gen_ai.tool.call.id': callId,
      'gen_ai.tool.type': 'function',
    };
    if (args !== undefined) attributes['gen_ai.tool.call.arguments'] = args;
    return this.tracer.startSpan(`execute_tool ${name}`, { kind: INTERNAL, attributes, startTime: time }, parent);
  }

  private endCall(
    spans: AgentSpans,
    data: { callId: string; isError: boolean; content: string; errorCode?: string },
    time: number,
  ): void {
    const call = spans.calls.get(data.callId);
    if (call === undefined) return;
    spans.calls.delete(data.callId);
    if (this.captureContent) call.span.setAttribute('gen_ai.tool.call.result', data.content);
    if (data.isError) call.span.setStatus({ code: ERROR }).setAttribute('error.type', data.errorCode ?? 'tool_error');
    call.span.end(hrTimeOf(time));
  }

  private endUnanswered(spans: AgentSpans, reason: StopReason, end: HrTime): void {
    for (const call of spans.calls.values()) {
      call.span.setStatus({ code: ERROR }).setAttribute('error.type', reason === 'completed' ? 'unanswered' : reason);
      // Each span keeps its end time (the SDK stores it as given): one array per span.
      call.span.end([end[0], end[1]]);
    }
    spans.calls.clear();
  }

  private endTurn(spans: AgentSpans, reason: StopReason, diagnostic: string | undefined, time: number): void {
    this.failChat(spans, reason === 'completed' ? 'error' : reason, time);
    const end = hrTimeOf(time);
    if (spans.calls.size > 0) this.endUnanswered(spans, reason, end);
    const turn = spans.turn;
    if (turn === undefined) return;
    spans.turn = undefined;
    turn.span.setAttribute('brood.stop_reason', reason);
    if (FAILED.has(reason)) {
      // A diagnostic may quote a provider's error body (the prompt, an echoed key): it is content.
      const message = this.captureContent && diagnostic !== undefined ? diagnostic : reason;
      turn.span.setStatus({ code: ERROR, message });
      turn.span.setAttribute('error.type', reason);
    }
    turn.span.end(end);
  }
}

/** Stop reasons that mark the turn span as failed (a refusal and a completed turn are answers). */
const FAILED = new Set<StopReason>(['error', 'aborted', 'max-steps', 'max-tokens']);
