/**
 * A turn's events as AI SDK UI message chunks (protocol v1). The agent's own text becomes text parts,
 * each of its tool calls (a `subagent` call included) a tool part; a descendant's text becomes one
 * `data-subagent` part per descendant, re-sent whole as it grows (a data part with the same id replaces
 * the earlier one on the client). brood writes this wire format itself: it does not depend on `ai`.
 */
import type { BroodEvent, StopReason, SubagentProgress, TurnResult, UIMessageChunk } from '../../types.js';

/** Between two model responses of one descendant, so their texts do not run together. */
const RESPONSE_SEPARATOR = '\n\n';

interface OpenText {
  id: string;
  /** True once a delta came: the response's assistant-message then only closes the part. */
  streamed: boolean;
}

interface Descendant {
  progress: SubagentProgress;
  /** Deltas of the response in progress were appended (its assistant-message adds nothing). */
  streamed: boolean;
  /** The next text starts a new response (a separator goes first). */
  newResponse: boolean;
}

export class UIMessageChunks {
  private textCount = 0;
  private open: OpenText | undefined;
  /** Tool calls announced with `tool-input-available`: only their results are sent. */
  private readonly announced = new Set<string>();
  private readonly descendants = new Map<string, Descendant>();

  constructor(private readonly agentId: string) {}

  start(): UIMessageChunk[] {
    return [{ type: 'start' }];
  }

  event(event: BroodEvent): UIMessageChunk[] {
    if (event.type === 'subagent-start' || event.type === 'subagent-end') return this.childRun(event);
    return event.agentId === this.agentId ? this.own(event) : this.descendant(event);
  }

  /** The last chunks: an `error` when the turn failed, then `finish` with its usage. */
  finish(outcome: { result: TurnResult } | { error: string }): UIMessageChunk[] {
    const chunks = this.closeText();
    if ('error' in outcome) return [...chunks, { type: 'error', errorText: outcome.error }, { type: 'finish' }];
    const { usage, stopReason, diagnostic } = outcome.result;
    if (stopReason === 'error') chunks.push({ type: 'error', errorText: diagnostic ?? 'the turn ended with an error' });
    chunks.push({ type: 'finish', messageMetadata: { usage, stopReason } });
    return chunks;
  }

  private own(event: BroodEvent): UIMessageChunk[] {
    switch (event.type) {
      case 'text-delta':
        return this.ownDelta(event.delta);
      case 'assistant-message':
        return this.ownResponse(event.text);
      case 'tool-start': {
        this.announced.add(event.callId);
        const input = { type: 'tool-input-available', toolCallId: event.callId, toolName: event.name } as const;
        return [...this.closeText(), { ...input, input: event.args }];
      }
      case 'tool-end':
        if (!this.announced.has(event.callId)) return [];
        return event.isError
          ? [{ type: 'tool-output-error', toolCallId: event.callId, errorText: event.content }]
          : [{ type: 'tool-output-available', toolCallId: event.callId, output: event.content }];
      default:
        return [];
    }
  }

  private ownDelta(delta: string): UIMessageChunk[] {
    const chunks: UIMessageChunk[] = [];
    if (this.open === undefined) {
      this.textCount += 1;
      this.open = { id: `text-${this.textCount}`, streamed: true };
      chunks.push({ type: 'text-start', id: this.open.id });
    }
    chunks.push({ type: 'text-delta', id: this.open.id, delta });
    return chunks;
  }

  /** A response whose text was not streamed (no subscriber-side deltas) is sent whole. */
  private ownResponse(text: string): UIMessageChunk[] {
    if (this.open !== undefined) return this.closeText();
    if (text === '') return [];
    return [...this.ownDelta(text), ...this.closeText()];
  }

  private closeText(): UIMessageChunk[] {
    const open = this.open;
    if (open === undefined) return [];
    this.open = undefined;
    return [{ type: 'text-end', id: open.id }];
  }

  private childRun(event: Extract<BroodEvent, { type: 'subagent-start' | 'subagent-end' }>): UIMessageChunk[] {
    const child = this.descendantOf(event.childId, event.agentId, event.depth + 1);
    const status: SubagentProgress['status'] = event.type === 'subagent-start' ? 'running' : event.stopReason;
    return this.progress(child, status);
  }

  private descendant(event: BroodEvent): UIMessageChunk[] {
    if (event.type !== 'text-delta' && event.type !== 'assistant-message') return [];
    if (event.parentId === undefined) return [];
    const child = this.descendantOf(event.agentId, event.parentId, event.depth);
    const before = child.progress.text;
    if (event.type === 'text-delta') {
      this.append(child, event.delta);
      child.streamed = true;
    } else {
      if (!child.streamed) this.append(child, event.text);
      child.streamed = false;
      child.newResponse = true;
    }
    return child.progress.text === before ? [] : this.progress(child, child.progress.status);
  }

  private append(child: Descendant, text: string): void {
    if (text === '') return;
    const { progress } = child;
    if (child.newResponse && progress.text !== '') progress.text += RESPONSE_SEPARATOR;
    child.newResponse = false;
    progress.text += text;
  }

  private descendantOf(agentId: string, parentId: string, depth: number): Descendant {
    let child = this.descendants.get(agentId);
    if (child === undefined) {
      const progress: SubagentProgress = { agentId, parentId, depth, text: '', status: 'running' };
      child = { progress, streamed: false, newResponse: false };
      this.descendants.set(agentId, child);
    }
    return child;
  }

  private progress(child: Descendant, status: 'running' | StopReason): UIMessageChunk[] {
    child.progress.status = status;
    const { agentId } = child.progress;
    return [{ type: 'data-subagent', id: agentId, data: { ...child.progress } }];
  }
}
