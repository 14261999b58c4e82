/**
 * The generic job surface for one-shot background delegations (SPEC §11.6): job_output, job_kill and
 * job_list over the runtime's job table. Jobs are per owner: another agent's job id reads as unknown,
 * so ids leak nothing across agents.
 */
import { z } from 'zod';
import type { Brood, BroodPlugin } from '../brood.js';
import { DEFAULTS } from '../defaults.js';
import { BroodError } from '../errors.js';
import { pluginAccess } from '../runtime/plugin-access.js';
import type { Job, JobTable } from '../subagents/types.js';
import { defineTool } from '../tools/define-tool.js';
import type { ToolDefinition } from '../types.js';
import { type Disposer, makeDisposer } from '../util/disposer.js';
import { isFinished, jobKillText, jobListText, jobOutputText, unknownJobMessage } from './render.js';
import { acquireShared, callingAgent } from './shared.js';

export const JOB_TOOLS_KEY = 'delegation:job-tools';
export const MAX_WAIT_MS = 600_000;

/** `use(jobTools())` next to instances that install them is harmless: one registration, ref-counted. */
export function jobTools(): BroodPlugin {
  return { name: 'jobTools', install: (brood) => installJobTools(brood) };
}

/** Used by one-shot instances too; shares the same reference count as explicit use(jobTools()). */
export function installJobTools(brood: Brood): Disposer {
  return acquireShared(brood, JOB_TOOLS_KEY, () =>
    registerAll(
      brood,
      createJobTools(() => pluginAccess(brood).jobs),
    ),
  );
}

/** Registers every tool or none: a duplicate name rolls back the ones already registered. */
export function registerAll(brood: Brood, tools: ToolDefinition[]): () => void {
  const disposers: Disposer[] = [];
  try {
    for (const tool of tools) disposers.push(brood.tools.register(tool));
  } catch (error) {
    for (const dispose of disposers.reverse()) dispose();
    throw error;
  }
  return makeDisposer(() => {
    for (const dispose of disposers.reverse()) dispose();
  });
}

export function createJobTools(jobs: () => JobTable): ToolDefinition[] {
  return [jobOutputTool(jobs), jobKillTool(jobs), jobListTool(jobs)];
}

const jobOutputArgs = z.object({
  job_id: z.string().describe('The job id returned when the background job started.'),
  wait: z.boolean().optional().describe('Wait for the job to finish (up to timeout_ms) before answering.'),
  timeout_ms: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe(`How long wait may take, in milliseconds (default ${DEFAULTS.jobWaitMs}, at most ${MAX_WAIT_MS}).`),
});

function jobOutputTool(jobs: () => JobTable): ToolDefinition {
  return defineTool({
    name: 'job_output',
    description:
      "Read a background job's final output and status. While it runs the output reads (no new output); " +
      'with wait: true the call waits for it to finish (up to timeout_ms) and never stops it.',
    parameters: jobOutputArgs,
    concurrencySafe: true,
    async execute(args, ctx) {
      const owner = callingAgent(ctx, 'job_output');
      const job = requireJob(jobs(), owner, args.job_id);
      if (args.wait === true && !isFinished(job.status)) {
        await waitForJob(job, clampWait(args.timeout_ms), ctx.signal);
      }
      return jobOutputText(job);
    },
  });
}

function jobKillTool(jobs: () => JobTable): ToolDefinition {
  return defineTool({
    name: 'job_kill',
    description: 'Request cancellation of a running background job.',
    parameters: z.object({ job_id: z.string().describe('The id of the job to stop.') }),
    execute(args, ctx) {
      const owner = callingAgent(ctx, 'job_kill');
      const table = jobs();
      const job = requireJob(table, owner, args.job_id);
      return jobKillText(job, table.kill(owner, job.id));
    },
  });
}

function jobListTool(jobs: () => JobTable): ToolDefinition {
  return defineTool({
    name: 'job_list',
    description: 'List your background jobs with their status and label.',
    parameters: z.object({}),
    concurrencySafe: true,
    execute(_args, ctx) {
      return jobListText(jobs().list(callingAgent(ctx, 'job_list')));
    },
  });
}

function requireJob(table: JobTable, owner: Parameters<JobTable['get']>[0], id: string): Job {
  const job = table.get(owner, id);
  if (job === undefined) throw new BroodError('INVALID_ARGS', unknownJobMessage(id), { details: { jobId: id } });
  return job;
}

export function clampWait(timeoutMs: number | undefined): number {
  return Math.min(timeoutMs ?? DEFAULTS.jobWaitMs, MAX_WAIT_MS);
}

/** Waits for the job, the timeout or the call's cancellation, whichever is first; never kills the job. */
export async function waitForJob(job: Pick<Job, 'done'>, timeoutMs: number, signal: AbortSignal): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stop = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
    onAbort = () => resolve();
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    await Promise.race([job.done.catch(() => undefined), stop]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}
