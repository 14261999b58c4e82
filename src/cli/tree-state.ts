/**
 * The delegation tree as the CLI sees it, built only from what the public API exposes: live from
 * `brood.events()` (demo, run), or from session headers and events read back from a sessions directory
 * (inspect, trace). Both feed the same nodes, so the live view, the summary and `inspect` agree on what
 * "state", "turns", "tokens" and "elapsed" mean.
 */
import type { BroodEvent, SessionEvent, SessionHeader, Usage } from '../index.js';
import { knownEvent } from '../sessions/event-types.js';

export interface AgentNode {
  id: string;
  parentId: string | undefined;
  depth: number;
  label: string;
  mode: 'top-level' | 'one-shot' | 'continuable';
  createdAt: number;
  lastEventAt: number;
  turns: number;
  openTurn: boolean;
  pendingTools: Set<string>;
  stopReasons: string[];
  diagnostics: string[];
  /** The latest turn that ended other than `completed`, with its diagnostic (why it failed) if any. */
  lastFailure: { reason: string; diagnostic: string | undefined } | undefined;
  inputTokens: number;
  outputTokens: number;
  /** Lifecycle runs started but not ended (live only; always 0 when read back from disk). */
  activeRuns: number;
  /** Live only: usage of foreground children that ended in the open turn (rolled into its turn-end usage). */
  childUsage: Usage;
  /** Live only: the agent's next turn waits for admission (createBrood limits). */
  admissionQueued: boolean;
}

export type AgentState = 'queued' | 'running' | 'waiting' | 'idle' | string;

export class TreeState {
  readonly nodes = new Map<string, AgentNode>();
  /** Live: children whose current run is a foreground delegation. */
  readonly foregroundRuns = new Set<string>();
  private readonly listeners = new Set<() => void>();

  /** Called after every change; the live view redraws or prints progress from here. */
  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  addHeader(header: SessionHeader): void {
    if (this.nodes.has(header.id)) return;
    this.nodes.set(header.id, newNode(header.id, header.parentSession, header.delegationDepth, header.createdAt));
    this.changed();
  }

  /** Live: one host event (see BroodEvent). */
  apply(event: BroodEvent): void {
    if (event.type === 'lagged') return;
    const node = this.nodeFor(event.agentId, event.parentId, event.depth, event.time);
    node.lastEventAt = Math.max(node.lastEventAt, event.time);
    applyBroodEvent(this, node, event);
    this.changed();
  }

  /** Live labels come from the child's descriptor (read once) or, for a top-level agent, from the caller. */
  setLabel(id: string, label: string): void {
    const node = this.nodes.get(id);
    if (node === undefined || node.label === label) return;
    node.label = label;
    this.changed();
  }

  nodeFor(id: string, parentId: string | undefined, depth: number, time: number): AgentNode {
    let node = this.nodes.get(id);
    if (node === undefined) {
      node = newNode(id, parentId, depth, time);
      this.nodes.set(id, node);
    }
    return node;
  }

  addEvents(id: string, events: SessionEvent[]): void {
    const node = this.nodes.get(id);
    if (node === undefined) return;
    for (const event of events) applyEvent(node, event);
    this.changed();
  }

  get activeRuns(): number {
    let total = 0;
    for (const node of this.nodes.values()) total += node.activeRuns;
    return total;
  }

  /** Nodes in tree order (depth-first, children by creation) with box-drawing prefixes. */
  ordered(): { node: AgentNode; prefix: string }[] {
    const children = new Map<string | undefined, AgentNode[]>();
    for (const node of this.nodes.values()) {
      // A parent outside this set (e.g. a subtree) makes the node a root here.
      const key = node.parentId !== undefined && this.nodes.has(node.parentId) ? node.parentId : undefined;
      children.set(key, [...(children.get(key) ?? []), node]);
    }
    const out: { node: AgentNode; prefix: string }[] = [];
    const visit = (node: AgentNode, indent: string, branch: string): void => {
      out.push({ node, prefix: indent + branch });
      const kids = sortByCreation(children.get(node.id) ?? []);
      const childIndent = indent + (branch === '' ? '' : branch === '└─ ' ? '   ' : '│  ');
      kids.forEach((kid, i) => {
        visit(kid, childIndent, i === kids.length - 1 ? '└─ ' : '├─ ');
      });
    };
    for (const root of sortByCreation(children.get(undefined) ?? [])) visit(root, '', '');
    return out;
  }

  /** The subtree rooted at `id` in tree order (for `trace`), or undefined when `id` is unknown. */
  subtree(id: string): AgentNode[] | undefined {
    if (!this.nodes.has(id)) return undefined;
    const keep = new Set([id]);
    // Tree order visits a parent before its children, so one pass collects every descendant.
    const ordered = this.ordered().map(({ node }) => node);
    for (const node of ordered) {
      if (node.parentId !== undefined && keep.has(node.parentId)) keep.add(node.id);
    }
    return ordered.filter((node) => keep.has(node.id));
  }

  private changed(): void {
    for (const fn of this.listeners) fn();
  }
}

function newNode(id: string, parentId: string | undefined, depth: number, createdAt: number): AgentNode {
  return {
    id,
    parentId,
    depth,
    label: '',
    mode: parentId === undefined ? 'top-level' : 'one-shot',
    createdAt,
    lastEventAt: createdAt,
    turns: 0,
    openTurn: false,
    pendingTools: new Set(),
    stopReasons: [],
    diagnostics: [],
    lastFailure: undefined,
    inputTokens: 0,
    outputTokens: 0,
    activeRuns: 0,
    childUsage: { inputTokens: 0, outputTokens: 0 },
    admissionQueued: false,
  };
}

function applyBroodEvent(state: TreeState, node: AgentNode, event: Exclude<BroodEvent, { type: 'lagged' }>): void {
  switch (event.type) {
    case 'turn-start':
      node.admissionQueued = false;
      startTurn(node);
      break;
    case 'queued':
      if (event.what === 'agent') node.admissionQueued = true;
      break;
    case 'admitted':
      if (event.what === 'agent') node.admissionQueued = false;
      break;
    case 'turn-end':
      endTurn(node, event.stopReason, event.diagnostic);
      node.inputTokens += Math.max(0, event.usage.inputTokens - node.childUsage.inputTokens);
      node.outputTokens += Math.max(0, event.usage.outputTokens - node.childUsage.outputTokens);
      node.childUsage = { inputTokens: 0, outputTokens: 0 };
      break;
    case 'tool-start':
      node.pendingTools.add(event.callId);
      break;
    case 'tool-end':
      node.pendingTools.delete(event.callId);
      break;
    case 'subagent-start': {
      const child = state.nodeFor(event.childId, node.id, node.depth + 1, event.time);
      if (event.mode === 'continuable') child.mode = 'continuable';
      child.activeRuns++;
      if (event.mode === 'foreground') state.foregroundRuns.add(event.childId);
      break;
    }
    case 'subagent-end': {
      const child = state.nodes.get(event.childId);
      if (child !== undefined) {
        child.activeRuns = Math.max(0, child.activeRuns - 1);
        child.lastEventAt = Math.max(child.lastEventAt, event.time);
      }
      // Foreground runs roll their usage into the parent's turn; the tree shows each agent's own tokens.
      if (state.foregroundRuns.delete(event.childId)) {
        node.childUsage.inputTokens += event.usage.inputTokens;
        node.childUsage.outputTokens += event.usage.outputTokens;
      }
      break;
    }
    default:
      break;
  }
}

function sortByCreation(nodes: AgentNode[]): AgentNode[] {
  return [...nodes].sort((a, b) => a.createdAt - b.createdAt);
}

function startTurn(node: AgentNode): void {
  node.turns++;
  node.openTurn = true;
}

function endTurn(node: AgentNode, reason: string, diagnostic: string | undefined): void {
  node.openTurn = false;
  node.pendingTools.clear();
  node.stopReasons.push(reason);
  if (diagnostic !== undefined) node.diagnostics.push(diagnostic);
  if (reason !== 'completed') node.lastFailure = { reason, diagnostic };
}

function applyEvent(node: AgentNode, logged: SessionEvent): void {
  node.lastEventAt = Math.max(node.lastEventAt, logged.time);
  const event = knownEvent(logged);
  switch (event?.type) {
    case 'subagent/descriptor':
      if (event.data.label !== undefined) node.label = event.data.label;
      if (event.data.mode === 'continuable') node.mode = 'continuable';
      break;
    case 'user/message':
      // A top-level agent has no descriptor label; its first message says what it is for.
      if (node.mode === 'top-level' && node.label === '') node.label = event.data.text;
      break;
    case 'turn/start':
      startTurn(node);
      break;
    case 'turn/end':
      endTurn(node, event.data.reason, event.data.diagnostic);
      break;
    case 'assistant/message':
      node.inputTokens += event.data.usage.inputTokens;
      node.outputTokens += event.data.usage.outputTokens;
      break;
    case 'tool/call':
      node.pendingTools.add(event.data.callId);
      break;
    case 'tool/result':
      node.pendingTools.delete(event.data.callId);
      break;
  }
}

/**
 * One word for the state column. `waiting` = a turn is open but blocked on tool calls (usually its
 * children); after a turn the last stop reason shows, except that an idle continuable child or
 * top-level agent that completed is `idle` while the tree is live: it can still receive work.
 */
export function stateOf(node: AgentNode, live: boolean): AgentState {
  if (node.openTurn) return node.pendingTools.size > 0 ? 'waiting' : 'running';
  if (live && node.admissionQueued) return 'queued';
  const last = node.stopReasons.at(-1);
  if (last === undefined) return 'queued';
  if (live && last === 'completed' && node.mode !== 'one-shot') return 'idle';
  return last;
}

/** Elapsed wall time: until now while something is in flight, else until the last event. */
export function elapsedOf(node: AgentNode, now: number, live: boolean): number {
  const busy = node.openTurn || node.activeRuns > 0 || node.stopReasons.length === 0;
  return (live && busy ? now : node.lastEventAt) - node.createdAt;
}

/** `completed×3` for repeated reasons, else the reasons in order: what `inspect` prints. */
export function summarizeReasons(reasons: string[]): string {
  if (reasons.length === 0) return '(no turns)';
  const [first] = reasons;
  if (reasons.every((r) => r === first)) return reasons.length === 1 ? `${first}` : `${first}×${reasons.length}`;
  return reasons.join(',');
}
