/**
 * `brood demo [--dir <path>]`: runs the scripted research tree (demo-script.ts) on worker threads,
 * shows it live from `brood.events()`, then prints the final tree and a summary. Sessions go to a
 * fileSessions directory so `brood inspect` and `brood trace` can be tried on the result straight away.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import {
  type Agent,
  type Brood,
  createBrood,
  defineTool,
  fileSessions,
  jobTools,
  messageTools,
  subagentTool,
} from '../index.js';
import { commandHelp, parseFlags, stringFlag } from './cli-errors.js';
import { CONTINUABLE_TOOL, DEMO_PROMPT, DEMO_ROUTE, demoModels, FOLLOW_UP, SEARCH_TOOL } from './demo-script.js';
import { followTree } from './follow-tree.js';
import { formatMs } from './format.js';
import { loadDisplayWidth, type Measure } from './text-width.js';
import { TreeState } from './tree-state.js';
import { LiveTreeView, renderTree, summaryLines, terminalSize } from './tree-view.js';

export const DEMO_USAGE = 'brood demo [--dir <sessions dir>]   (default .brood/sessions)';
export const DEMO_HELP = commandHelp(DEMO_USAGE, [
  'Runs a scripted delegation tree (no API key, no network) on worker threads and shows it live:',
  'a lead fans out two foreground children (one delegates further), a background job and a',
  'continuable reviewer that later gets a follow-up. Sessions are written to the directory, so',
  '`brood inspect <dir>` and `brood trace <dir> <id>` work on the result.',
]);

export async function demoCommand(args: string[]): Promise<number> {
  const { values } = parseFlags('demo', args, { dir: { type: 'string' } }, []);
  const dir = stringFlag(values, 'dir') ?? '.brood/sessions';
  const measure = await loadDisplayWidth();
  const state = new TreeState();
  const brood = setUpDemo(dir);
  const following = followTree(brood, state);
  const startedAt = Date.now();
  const tty = process.stdout.isTTY === true;
  const view = new LiveTreeView(state, process.stdout, tty, startedAt, measure);
  const out = (line = ''): boolean => process.stdout.write(`${line}\n`);
  out(`brood demo — scripted delegation tree, sessions in ${dir}`);
  view.start();
  try {
    const lead = await brood.createAgent({ model: DEMO_ROUTE });
    state.nodeFor(lead.id, undefined, 0, Date.now());
    state.setLabel(lead.id, DEMO_PROMPT);
    const result = await lead.run(DEMO_PROMPT);
    await followUpReviewer(lead, state);
    await settle(lead, state);
    view.stop();
    const wallMs = Date.now() - startedAt;
    printResults(out, state, {
      output: result.output,
      stopReason: result.stopReason,
      wallMs,
      dir,
      leadId: lead.id,
      tty,
      measure,
    });
    return result.stopReason === 'completed' ? 0 : 1;
  } finally {
    view.stop();
    await brood.close();
    await following;
  }
}

function setUpDemo(dir: string): Brood {
  const brood = createBrood({ models: [demoModels()], sessions: fileSessions(dir), pool: { threads: 2 } });
  brood.tools.register(searchTool);
  // Foreground siblings and one-shot background jobs (this instance installs the job tools itself).
  brood.use(subagentTool({ provider: 'spawn', maxDepth: 3 }));
  brood.use(jobTools());
  // A second instance whose background mode keeps the child's conversation for follow-ups.
  brood.use(
    subagentTool({ provider: 'spawn', toolName: CONTINUABLE_TOOL, backgroundMode: 'continuable', maxDepth: 3 }),
  );
  brood.use(messageTools());
  return brood;
}

/** A stand-in research tool so the trace shows tool spans in a child, not only delegations. */
const searchTool = defineTool({
  name: SEARCH_TOOL,
  description: 'Search the team notes; returns matching note titles.',
  parameters: z.object({ query: z.string() }),
  concurrencySafe: true,
  async execute({ query }, ctx) {
    await sleep(150, undefined, { signal: ctx.signal });
    return `2 notes match "${query}"`;
  },
});

/**
 * The reviewer is continuable: once its first activation settled, send it a follow-up through the
 * lead's own `send_message` tool (as the lead's model would), so its conversation gets a second turn.
 */
async function followUpReviewer(lead: Agent, state: TreeState): Promise<void> {
  const reviewer = await until(state, () => {
    const node = [...state.nodes.values()].find((n) => n.mode === 'continuable');
    return node !== undefined && node.turns >= 1 && !node.openTurn && node.activeRuns === 0 ? node : undefined;
  });
  const sent = await lead.tools.execute({
    name: 'send_message',
    arguments: { subagent_id: reviewer.id, message: FOLLOW_UP },
  });
  if (sent.isError) throw new Error(`follow-up to ${reviewer.id} failed: ${sent.content}`);
}

/**
 * The tree has settled when no run is active and the lead is idle — checked twice across a short
 * pause, because notices (job done, child settled) reach the lead just after a run's end event.
 */
async function settle(lead: Agent, state: TreeState): Promise<void> {
  for (let stable = 0; stable < 2; ) {
    await lead.whenIdle();
    await until(state, () => (state.activeRuns === 0 ? true : undefined));
    await sleep(80);
    stable = lead.status === 'idle' && state.activeRuns === 0 ? stable + 1 : 0;
  }
}

/** Resolves with the first truthy value of `check`, re-evaluated on every tree change. */
function until<T>(state: TreeState, check: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const done = (value: T): void => {
      unsubscribe();
      clearTimeout(timer);
      resolve(value);
    };
    const timer = setTimeout(() => {
      unsubscribe();
      reject(new Error(`demo: timed out after ${timeoutMs} ms waiting for the tree to settle`));
    }, timeoutMs);
    const unsubscribe = state.onChange(() => {
      const value = check();
      if (value !== undefined) done(value);
    });
    const now = check();
    if (now !== undefined) done(now);
  });
}

interface DemoOutcome {
  output: string;
  stopReason: string;
  wallMs: number;
  dir: string;
  leadId: string;
  /** On a TTY the live view's last frame is the tree already; do not print it twice. */
  tty: boolean;
  measure: Measure;
}

function printResults(out: (line?: string) => void, state: TreeState, outcome: DemoOutcome): void {
  const { columns } = terminalSize(process.stdout);
  if (!outcome.tty) {
    out();
    out('Delegation tree');
    for (const line of renderTree(state, {
      now: Date.now(),
      live: false,
      columns: columns - 2,
      rows: Number.POSITIVE_INFINITY,
      measure: outcome.measure,
    }))
      out(`  ${line}`);
  }
  out();
  out(`Summary (${formatMs(outcome.wallMs)} wall, lead ${outcome.stopReason})`);
  for (const line of summaryLines(state, outcome.wallMs, outcome.measure, columns - 2)) out(`  ${line}`);
  out();
  out(`Lead answer: ${outcome.output}`);
  out();
  // `npx brood` runs this package's bin from a clone (npm start) and from a project that installed it.
  out(`Sessions: ${outcome.dir}`);
  out(`  npx brood inspect ${outcome.dir}`);
  out(`  npx brood trace ${outcome.dir} ${outcome.leadId} --out trace.json   (open in https://ui.perfetto.dev)`);
}
