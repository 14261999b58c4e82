/**
 * `brood trace <dir> <id> [--out <file>]`: a Chrome trace-event JSON (`{ traceEvents }`) of the tree
 * rooted at agent `<id>`, for Perfetto (ui.perfetto.dev) or chrome://tracing. pid 1 is the runtime; each
 * agent is a thread (tid) named after it, ordered like the tree, carrying complete (`ph: 'X'`) spans
 * for its turns, model requests and tool calls. Timestamps are microseconds (with the sub-millisecond
 * precision the runtime's clock records) from the tree's first event. Metadata events carry
 * `cat: '__metadata'`; a flow (`ph: 's'` → `ph: 'f'`) links each delegation tool slice of a parent to
 * its child's first slice, so Perfetto draws the arrow.
 *
 * Complete events on one thread must nest. Parallel tool calls of one assistant message overlap
 * without nesting, so each overlapping call goes to an extra "parallel tools" lane right below its
 * agent's track; the agent's own track keeps the turns, the requests and the first of each batch.
 */
import { writeFile } from 'node:fs/promises';
import type { SessionEvent } from '../index.js';
import { knownEvent, parsedToolArguments, type SessionEventOf } from '../sessions/event-types.js';
import { definedEntries, isPlainObject } from '../util/plain.js';
import { type CliStreams, commandHelp, parseFlags, stringFlag, UsageError } from './cli-errors.js';
import { truncate } from './format.js';
import { loadSessionDir } from './session-dir.js';
import type { AgentNode } from './tree-state.js';

export const TRACE_USAGE = 'brood trace <dir> <id> [--out <file>]';
export const TRACE_HELP = commandHelp(TRACE_USAGE, [
  'Writes a Chrome trace-event JSON of the delegation tree rooted at session <id> (stdout, or --out):',
  'one track per agent with its turns, model requests and tool calls, parallel tool lanes, and flow',
  'arrows from each delegation call to the child it started. Open it in https://ui.perfetto.dev.',
]);

export interface TraceEvent {
  name: string;
  ph: 'X' | 'M' | 's' | 'f';
  pid: number;
  tid: number;
  ts?: number;
  dur?: number;
  cat?: string;
  /** Flow events: the id pairing an 's' with its 'f'; bp 'e' binds the 'f' to the enclosing slice. */
  id?: number;
  bp?: 'e';
  args?: Record<string, unknown>;
}

interface Span {
  name: string;
  cat: 'turn' | 'model' | 'tool';
  start: number;
  end: number;
  args: Record<string, unknown>;
}

const PID = 1;

export async function traceCommand(args: string[], { stdout, stderr }: CliStreams): Promise<number> {
  const { values, positionals } = parseFlags('trace', args, { out: { type: 'string' } }, ['dir', 'id']);
  const [dir, id] = positionals;
  const { tree, events } = await loadSessionDir('trace', dir);
  const agents = tree.subtree(id);
  if (agents === undefined) throw new UsageError(`brood trace: no session ${id} in ${dir}`);
  const json = JSON.stringify({ traceEvents: buildTrace(agents, events), displayTimeUnit: 'ms' });
  const out = stringFlag(values, 'out');
  if (out === undefined) stdout.write(`${json}\n`);
  else {
    await writeFile(out, `${json}\n`);
    stderr.write(`wrote ${out} (${agents.length} agents); open it in https://ui.perfetto.dev\n`);
  }
  return 0;
}

export function buildTrace(agents: AgentNode[], events: Map<string, SessionEvent[]>): TraceEvent[] {
  const base = Math.min(
    ...agents.map((a) => a.createdAt),
    ...agents.map((a) => events.get(a.id)?.[0]?.time ?? Infinity),
  );
  // Whole microseconds: the log's clock has sub-millisecond precision, so these are real µs, not ms × 1000.
  const us = (ms: number): number => Math.round((ms - base) * 1000);
  const out: TraceEvent[] = [meta('process_name', 0, { name: 'brood' })];
  let nextLaneTid = agents.length + 1;
  const trackOf = new Map<string, { tid: number; lanes: Map<Span, number> }>();
  agents.forEach((agent, index) => {
    const tid = index + 1;
    // Sort keys leave room for lanes under each agent: agent i at 1000·i, its lanes right after.
    out.push(meta('thread_name', tid, { name: `${agent.id} ${truncate(agent.label, 40)}`.trim() }));
    out.push(meta('thread_sort_index', tid, { sort_index: tid * 1000 }));
    const lanes = assignLanes(spansOf(events.get(agent.id) ?? []));
    const laneOf = new Map<Span, number>();
    trackOf.set(agent.id, { tid, lanes: laneOf });
    lanes.forEach((spans, lane) => {
      const laneTid = lane === 0 ? tid : nextLaneTid++;
      for (const span of spans) laneOf.set(span, laneTid);
      if (lane > 0) {
        out.push(meta('thread_name', laneTid, { name: `${agent.id} · parallel tools ${lane + 1}` }));
        out.push(meta('thread_sort_index', laneTid, { sort_index: tid * 1000 + lane }));
      }
      // Parents before children at equal start (longer first): importers build the nesting in order.
      const sorted = [...spans].sort((a, b) => a.start - b.start || b.end - a.end);
      for (const span of sorted) {
        out.push({
          name: span.name,
          cat: span.cat,
          ph: 'X',
          pid: PID,
          tid: laneTid,
          ts: us(span.start),
          dur: Math.max(0, us(span.end) - us(span.start)),
          args: span.args,
        });
      }
    });
  });
  out.push(...flowEvents(agents, trackOf, us));
  return out;
}

function meta(name: string, tid: number, args: Record<string, unknown>): TraceEvent {
  return { name, ph: 'M', cat: '__metadata', pid: PID, tid, args };
}

/**
 * A child is linked to the parent's tool slice that started it: the delegation call whose
 * `description` is the child's label and whose slice contains the child's creation (any tool slice
 * containing it when no label matches). The 's' sits inside that slice, the 'f' at the start of the
 * child's first slice (bound to it with bp 'e').
 */
function flowEvents(
  agents: AgentNode[],
  tracks: Map<string, { tid: number; lanes: Map<Span, number> }>,
  us: (ms: number) => number,
): TraceEvent[] {
  const out: TraceEvent[] = [];
  let id = 0;
  for (const child of agents) {
    const parent = child.parentId === undefined ? undefined : tracks.get(child.parentId);
    const own = tracks.get(child.id);
    if (parent === undefined || own === undefined) continue;
    const firstSlice = [...own.lanes.keys()].sort((a, b) => a.start - b.start)[0];
    const born = Math.min(child.createdAt, firstSlice?.start ?? Infinity);
    const slice = delegatingSlice([...parent.lanes.keys()], child.label, born);
    if (slice === undefined || firstSlice === undefined) continue;
    id += 1;
    const name = `delegate ${child.id}`;
    out.push({
      name,
      cat: 'delegation',
      ph: 's',
      id,
      pid: PID,
      tid: parent.lanes.get(slice) ?? parent.tid,
      ts: us(Math.max(slice.start, Math.min(born, slice.end))),
    });
    out.push({
      name,
      cat: 'delegation',
      ph: 'f',
      bp: 'e',
      id,
      pid: PID,
      tid: own.lanes.get(firstSlice) ?? own.tid,
      ts: us(firstSlice.start),
    });
  }
  return out;
}

/** Turn, model-request and tool-call spans from one agent's events; open spans end at its last event. */
export function spansOf(events: SessionEvent[]): Span[] {
  const spans: Span[] = [];
  const openTurns = new Map<number, SessionEventOf<'turn/start'>>();
  const openTools = new Map<string, SessionEventOf<'tool/call'>>();
  let openRequest: SessionEventOf<'model/request'> | undefined;
  const close = <K, E>(open: Map<K, E>, key: K, made: (start: E) => Span): void => {
    const start = open.get(key);
    open.delete(key);
    if (start) spans.push(made(start));
  };
  for (const logged of events) {
    const event = knownEvent(logged);
    if (event?.type === 'turn/start') openTurns.set(event.data.turn, event);
    else if (event?.type === 'turn/end') {
      const { turn, reason, diagnostic } = event.data;
      close(openTurns, turn, (start) => span(`turn ${turn}`, 'turn', start, event.time, { reason, diagnostic }));
    } else if (event?.type === 'model/request') openRequest = event;
    else if (event?.type === 'assistant/message' && openRequest) {
      const { provider, model, threadId } = openRequest.data;
      const { finish, usage } = event.data;
      spans.push(span(`model ${provider}/${model}`, 'model', openRequest, event.time, { finish, usage, threadId }));
      openRequest = undefined;
    } else if (event?.type === 'tool/call') openTools.set(event.data.callId, event);
    else if (event?.type === 'tool/result') {
      const { callId, name, isError, errorCode } = event.data;
      close(openTools, callId, (start) =>
        span(`tool ${name}`, 'tool', start, event.time, {
          callId,
          isError,
          errorCode,
          description: describedBy(start),
        }),
      );
    }
  }
  const last = events.at(-1)?.time ?? 0;
  for (const start of openTurns.values())
    spans.push(span(`turn ${start.data.turn}`, 'turn', start, last, { reason: 'unfinished' }));
  for (const start of openTools.values())
    spans.push(span(`tool ${start.data.name}`, 'tool', start, last, { unfinished: true }));
  if (openRequest) spans.push(span('model request', 'model', openRequest, last, { unfinished: true }));
  return spans;
}

/**
 * The parent's tool slice that started a child born at `born`: among the calls labelled like the child
 * (all tool calls when none is), the one containing `born`, else the last one that started before it.
 */
function delegatingSlice(spans: Span[], label: string, born: number): Span | undefined {
  const tools = spans.filter((span) => span.cat === 'tool');
  const labelled = tools.filter((span) => label !== '' && span.args.description === label);
  const candidates = (labelled.length > 0 ? labelled : tools).sort((a, b) => a.start - b.start);
  return (
    candidates.find((span) => span.start <= born && born <= span.end) ??
    candidates.filter((span) => span.start <= born).at(-1) ??
    candidates[0]
  );
}

/** A delegation call's `description` argument (what its child is labelled with). */
function describedBy(call: SessionEventOf<'tool/call'>): string | undefined {
  const args = parsedToolArguments(call.data.arguments);
  if (!isPlainObject(args)) return undefined;
  return typeof args.description === 'string' ? args.description : undefined;
}

function span(
  name: string,
  cat: Span['cat'],
  start: { time: number },
  end: number,
  args: Record<string, unknown>,
): Span {
  const defined = definedEntries(args);
  return { name, cat, start: start.time, end: Math.max(start.time, end), args: defined };
}

/**
 * Lane 0 takes every turn and model request (they nest: requests run inside turns, one at a time) and
 * each tool call that starts after the previous lane-0 tool call ended; an overlapping call takes the
 * first extra lane that is free by its start.
 */
export function assignLanes(spans: Span[]): Span[][] {
  const lanes: Span[][] = [spans.filter((s) => s.cat !== 'tool')];
  const laneEnds: number[] = [-Infinity];
  const tools = spans.filter((s) => s.cat === 'tool').sort((a, b) => a.start - b.start || a.end - b.end);
  for (const tool of tools) {
    const free = laneEnds.findIndex((end) => end <= tool.start);
    if (free < 0) {
      lanes.push([tool]);
      laneEnds.push(tool.end);
    } else {
      lanes[free]?.push(tool);
      laneEnds[free] = tool.end;
    }
  }
  return lanes;
}
