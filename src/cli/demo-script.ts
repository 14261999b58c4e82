/**
 * The demo's scripted research task. Every agent's behaviour is a script matched on its first message
 * (SPEC §8), with small latencies so the tree visibly runs for a few seconds. No API key, no network.
 *
 * Shape: the lead fans out four delegations in one assistant message — two foreground siblings (one of
 * which delegates further), one one-shot background job (collected with job_output) and one continuable
 * reviewer (later given a follow-up with send_message).
 */
import { type ScriptedTurn, scriptedModels } from '../index.js';

export const DEMO_PROVIDER = 'scripted';
export const DEMO_ROUTE = { provider: DEMO_PROVIDER, model: 'scripted' } as const;
export const DEMO_PROMPT = 'Research brief: how should an agent runtime isolate subagents?';
export const CONTINUABLE_TOOL = 'subagent_async';
export const FOLLOW_UP = 'Re-check the introduction: it was rewritten after your first review.';

const delegate = (tool: string, description: string, prompt: string, extra: Record<string, unknown> = {}) => ({
  name: tool,
  arguments: { description, prompt, ...extra },
});

// Children are matched by these phrases; each appears in exactly one prompt.
const SURVEY = 'Survey prior designs';
const ANALYZE = 'Analyze the benchmark numbers';
const VERIFY = 'Verify the two outlier measurements';
const CITATIONS = 'Collect citations';
const REVIEW = 'Review the draft structure';

export const SEARCH_TOOL = 'search_notes';
const search = (query: string) => ({ name: SEARCH_TOOL, arguments: { query } });

const leadTurns: ScriptedTurn[] = [
  {
    text: 'Splitting the brief into four pieces of work.',
    toolCalls: [
      delegate(
        'subagent',
        'survey prior designs',
        `${SURVEY} for isolating LLM subagents (processes, actors, worker threads).`,
      ),
      delegate('subagent', 'analyze benchmarks', `${ANALYZE} for fan-out latency and memory per child.`),
      delegate('subagent', 'collect citations', `${CITATIONS} for every claim in the brief.`, {
        run_in_background: true,
      }),
      delegate(CONTINUABLE_TOOL, 'review draft', `${REVIEW} and report problems.`),
    ],
  },
  // The background job is the slowest piece; wait for it before writing the brief.
  { toolCalls: [{ name: 'job_output', arguments: { job_id: 'job_1', wait: true, timeout_ms: 10_000 } }] },
  { text: 'Brief: isolate each subagent driver in a pooled worker thread; keep tools and sessions in the parent.' },
  // Later turns answer settlement / job notices (and the reviewer's follow-up notice).
  ...Array.from({ length: 6 }, (): ScriptedTurn => ({ text: 'Noted.' })),
];

export function demoModels() {
  return scriptedModels({
    id: DEMO_PROVIDER,
    name: 'Scripted demo models',
    fallback: 'echo',
    scripts: [
      {
        match: SURVEY,
        latencyMs: 500,
        turns: [{ text: 'Survey: process pools isolate best, worker threads start fastest, actors sit between.' }],
      },
      {
        match: ANALYZE,
        latencyMs: 300,
        turns: [
          { toolCalls: [delegate('subagent', 'verify outliers', `${VERIFY} in run 7 and run 12.`)] },
          { text: 'Analysis: worker-thread fan-out stays near the timer floor. {{results}}' },
        ],
      },
      { match: VERIFY, latencyMs: 500, turns: [{ text: 'Verified: both outliers were cold thread starts.' }] },
      {
        match: CITATIONS,
        latencyMs: 450,
        turns: [
          { toolCalls: [search('worker thread isolation'), search('actor model supervision')] },
          { text: 'Citations: {{results}}' },
        ],
      },
      {
        match: REVIEW,
        latencyMs: 400,
        turns: [
          { text: 'Review: structure is sound; the introduction is too long.' },
          { text: 'Second review: the new introduction reads well.' },
        ],
      },
      { match: DEMO_PROMPT, latencyMs: 150, turns: leadTurns },
    ],
  });
}
