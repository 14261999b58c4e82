/**
 * The foreground children a turn a crash left open had finished before it (their results are in the
 * turn's log): their usage rolled up into that turn once, when each settled, so the resumed turn's
 * usage and usage tree include them again, read from their own logs (their own foreground children
 * included, as each child's result carried them). Background jobs and continuable children never roll
 * up into the turn that started them, so they are not counted.
 */
import { addUsage, sumUsage } from '../models/usage.js';
import { childOfCall, subagentDescriptorOf } from '../sessions/child-index.js';
import { knownEvent } from '../sessions/event-types.js';
import { isSelfResuming } from '../tools/interrupted.js';
import type { SessionEvent, SessionStore, Usage, UsageNode } from '../types.js';
import type { AgentInit } from './types.js';

export interface FinishedChildren {
  /** What the children's results carried (each child's own usage and its foreground children's). */
  usage: Usage;
  /** Their usage trees, in the order their results were logged. */
  trees: UsageNode[];
}

/** What a background delegation answers: its child ran detached from the turn. */
const BACKGROUND_ANSWER = /^started (background subagent job job_\d+|subagent \S+)$/;

/** Of `parentId`'s open turn in `events`: the children its delegation calls had finished. */
export async function finishedChildren(
  store: SessionStore,
  agent: { readonly id: string; readonly init: Pick<AgentInit, 'tools'> },
  events: readonly SessionEvent[],
): Promise<FinishedChildren> {
  const isDelegation = (name: string): boolean => {
    const definition = agent.init.tools.find(name)?.definition;
    return definition !== undefined && isSelfResuming(definition);
  };
  const trees = await childTrees(store, agent.id, lastTurnOf(events), isDelegation, new Set([agent.id]));
  return { usage: sumUsage(...trees.map((tree) => tree.total)), trees };
}

async function childTrees(
  store: SessionStore,
  parentId: string,
  turn: readonly SessionEvent[],
  isDelegation: (name: string) => boolean,
  visited: Set<string>,
): Promise<UsageNode[]> {
  const callIds = answeredDelegations(turn, isDelegation);
  if (callIds.length === 0) return [];
  const nodes = await Promise.all(
    callIds.map(async (callId) => {
      const childId = await childOfCall(store, parentId, callId);
      // A store's parent links could form a cycle (hand-written sessions): each is counted once.
      if (childId === undefined || visited.has(childId)) return undefined;
      visited.add(childId);
      return childNode(store, childId, isDelegation, visited);
    }),
  );
  return nodes.filter((node) => node !== undefined);
}

/** The call ids of the turn's delegation calls whose foreground result is logged, in that order. */
function answeredDelegations(turn: readonly SessionEvent[], isDelegation: (name: string) => boolean): string[] {
  const callIds: string[] = [];
  for (const logged of turn) {
    const event = knownEvent(logged);
    if (event?.type !== 'tool/result' || !isDelegation(event.data.name)) continue;
    if (!BACKGROUND_ANSWER.test(event.data.content)) callIds.push(event.data.callId);
  }
  return callIds;
}

/** The child's result usage as its last ended turn shows it (a one-shot child's run is that turn). */
async function childNode(
  store: SessionStore,
  childId: string,
  isDelegation: (name: string) => boolean,
  visited: Set<string>,
): Promise<UsageNode | undefined> {
  const { header, events } = await store.read(childId);
  const descriptor = subagentDescriptorOf(events);
  if (descriptor?.mode === 'continuable') return undefined;
  const turn = lastTurnOf(events);
  const usage: Usage = { inputTokens: 0, outputTokens: 0 };
  let { provider, model } = header.model;
  for (const logged of events) {
    const event = knownEvent(logged);
    if (event?.type === 'model/request') ({ provider, model } = event.data);
  }
  for (const logged of turn) {
    const event = knownEvent(logged);
    if (event?.type === 'assistant/message') addUsage(usage, event.data.usage);
  }
  const children = await childTrees(store, childId, turn, isDelegation, visited);
  const label = typeof descriptor?.label === 'string' ? { label: descriptor.label } : {};
  const total = sumUsage(usage, ...children.map((child) => child.total));
  return { agentId: childId, ...label, provider, model, usage, total, children };
}

/** The events of the session's last turn, from its `turn/start` on. */
function lastTurnOf(events: readonly SessionEvent[]): readonly SessionEvent[] {
  for (let index = events.length - 1; index >= 0; index -= 1)
    if (events[index]?.type === 'turn/start') return events.slice(index);
  return [];
}
