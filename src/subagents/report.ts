/**
 * Continuable children report back (SPEC §16 "Reports"): the child-scoped `report` tool, its prompt
 * section, and `brood.subagents.reportFrom()`, which the tool calls. A report is a `user/message`
 * (source `subagent-report`) accepted into the parent's inbox the way a settlement notice is
 * (durable first, then the wake rules), with a delivery that decides when the parent's model sees it.
 */
import { z } from 'zod';
import type { AgentImpl } from '../agents/agent.js';
import { DEFAULTS } from '../defaults.js';
import { BroodError } from '../errors.js';
import { defineTool } from '../tools/define-tool.js';
import type { PromptSection, ToolDefinition } from '../types.js';
import type { SubagentCore } from './core.js';
import type { ReportDelivery, ReportOptions } from './types.js';

export const REPORT_TOOL = 'report';
export const REPORT_SECTION = `tool:${REPORT_TOOL}`;
/** After deployment sections and the delegation guidance (200). */
const REPORT_SECTION_ORDER = 210;
const DELIVERIES: readonly ReportDelivery[] = ['next-step', 'quiet'];

export function reportText(childId: string, output: string): string {
  return `Background subagent ${childId} reported:\n${output}`;
}

export function reportAcceptedText(messageId: string): string {
  return `report accepted by the agent that started you as message ${messageId}`;
}

/** What the `tool:report` section tells a continuable child. */
export const REPORT_GUIDANCE =
  'You were started by another agent and work in the background. It sees nothing of your work ' +
  'but what you report, unless it asks you. Each time you finish a piece of work, call `report` ' +
  'once with a self-contained result for that piece: what you found or did, with the facts, names ' +
  'and numbers it needs to act without reading your transcript. Then go on with what remains.';

/** One frozen section for every child: its text never varies, so a child's prompt prefix stays stable. */
const SECTION: PromptSection = Object.freeze({
  name: REPORT_SECTION,
  tool: REPORT_TOOL,
  order: REPORT_SECTION_ORDER,
  text: REPORT_GUIDANCE,
});

/** The runtime's report path; the tool definition is built once and shared by every child's layer. */
export class ChildReports {
  /** Each child's configured delivery (subagentTool's reportDelivery), when it is not the default. */
  private readonly deliveries = new WeakMap<AgentImpl, ReportDelivery>();
  /** Each child's report size cap (subagentTool's maxReportBytes), when it is not the default. */
  private readonly caps = new WeakMap<AgentImpl, number>();
  private tool: ToolDefinition | undefined;

  constructor(
    private readonly core: SubagentCore,
    private readonly assertOpen: () => void,
  ) {}

  /** Part of being a continuable child: in its own layers, so no tool filter removes them. */
  install(child: AgentImpl, delivery: ReportDelivery | undefined, maxBytes?: number): void {
    if (delivery !== undefined && delivery !== DEFAULTS.reportDelivery) this.deliveries.set(child, delivery);
    if (maxBytes !== undefined && maxBytes !== DEFAULTS.maxReportBytes) this.caps.set(child, maxBytes);
    child.tools.register(this.reportTool());
    child.prompt.register(SECTION);
  }

  async reportFrom(childId: string, output: string, options: ReportOptions = {}): Promise<string> {
    this.assertOpen();
    const { delivery, signal } = parseReportOptions(options);
    if (typeof childId !== 'string') throw new BroodError('INVALID_ARGS', 'reportFrom: childId must be a string');
    if (typeof output !== 'string' || output.trim() === '')
      throw new BroodError('INVALID_ARGS', 'reportFrom: a report needs a non-empty output', { details: { childId } });
    if (signal?.aborted) throw new BroodError('ABORTED', 'the report was cancelled before it was accepted');
    const child = this.core.agents.get(childId);
    if (child === undefined || child.mode !== 'continuable' || child.isDisposed) {
      throw new BroodError('UNAUTHORIZED', `'${childId}' is not a live continuable subagent of this runtime`, {
        details: { childId },
      });
    }
    refuseOversized(childId, output, this.caps.get(child) ?? DEFAULTS.maxReportBytes);
    const parent = child.parentId === undefined ? undefined : this.core.agents.get(child.parentId);
    if (parent === undefined || parent.isDisposed) {
      throw new BroodError('PARENT_UNAVAILABLE', `the agent that started subagent ${childId} is gone`, {
        details: { childId, parentId: child.parentId },
      });
    }
    const accepted = parent.accept({
      message: reportText(childId, output),
      source: 'subagent-report',
      report: { delivery: delivery ?? this.deliveries.get(child) ?? DEFAULTS.reportDelivery, from: childId },
    });
    await accepted.durable;
    return accepted.id;
  }

  private reportTool(): ToolDefinition {
    this.tool ??= defineTool({
      name: REPORT_TOOL,
      description:
        'Hand the agent that started you a self-contained result while you keep working. It sees ' +
        'nothing else of your transcript unless it asks, so the report must stand on its own.',
      parameters: z.object({
        output: z.string().describe('The complete result of one finished piece of work.'),
      }),
      execute: async (args, ctx) => {
        // Registered only in continuable children's own layers: the calling agent is the child.
        if (ctx.agent === undefined) throw new BroodError('SCOPE_REQUIRED', 'report must be called by a subagent');
        return reportAcceptedText(await this.reportFrom(ctx.agent.id, args.output, { signal: ctx.signal }));
      },
    });
    return this.tool;
  }
}

function parseReportOptions(options: unknown): ReportOptions {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new BroodError('INVALID_ARGS', 'reportFrom: options must be an object ({ delivery?, signal? })');
  const { delivery, signal } = options as Record<string, unknown>;
  if (delivery !== undefined && !isReportDelivery(delivery))
    throw new BroodError('INVALID_ARGS', "reportFrom: delivery must be 'next-step' or 'quiet'");
  if (signal !== undefined && !(signal instanceof AbortSignal))
    throw new BroodError('INVALID_ARGS', 'reportFrom: signal must be an AbortSignal');
  return options as ReportOptions;
}

/**
 * A report enters the parent's context whole, on every later request of the parent: one larger than
 * the cap is refused to the child (INVALID_ARGS, nothing written), which can report a shorter one.
 */
function refuseOversized(childId: string, output: string, maxBytes: number): void {
  // Each UTF-16 unit is at most 3 UTF-8 bytes: most reports are measured without encoding them.
  if (output.length * 3 <= maxBytes) return;
  const bytes = Buffer.byteLength(output, 'utf8');
  if (bytes <= maxBytes) return;
  throw new BroodError(
    'INVALID_ARGS',
    `a report may be at most ${maxBytes} bytes and this one is ${bytes}: report a shorter, self-contained summary`,
    { details: { childId, bytes, maxReportBytes: maxBytes } },
  );
}

/** startContinuable's and a descriptor's maxReportBytes: a positive safe integer. */
export function isReportCap(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

/** startContinuable's reportDelivery, checked like the rest of the spec. */
export function isReportDelivery(value: unknown): value is ReportDelivery {
  return DELIVERIES.includes(value as ReportDelivery);
}
