/**
 * Who decides a call: the tool's own `approval` first, then the runtime's `policy`, else the
 * call runs as it always did. A child's 'ask' is then held to what its ancestry allows: the runtime's
 * `children` and every delegation tool's `approvals` on the way down, tighten-only.
 */
import type { ToolContext, ToolDefinition } from '../types.js';
import type { ApprovalCall, ApprovalsOptions, ApprovalVerdict, ChildApprovals } from './types.js';

const VERDICTS: ReadonlySet<unknown> = new Set<ApprovalVerdict>(['allow', 'deny', 'ask']);

/**
 * What a rule said, read safely: anything but a verdict (a throw, a rejection, a stray value) denies.
 * A rule that answers synchronously is read synchronously, so only a promise needs bounding in time.
 */
function safely(rule: () => unknown): ApprovalVerdict | Promise<ApprovalVerdict> {
  try {
    const answer = rule();
    if (typeof answer !== 'object' || answer === null) return asVerdict(answer);
    // A thenable whose `then` throws becomes a rejection here, never a throw.
    return Promise.resolve(answer).then(asVerdict, () => 'deny');
  } catch {
    return 'deny';
  }
}

function asVerdict(answer: unknown): ApprovalVerdict {
  return VERDICTS.has(answer) ? (answer as ApprovalVerdict) : 'deny';
}

/** True when neither the tool nor the runtime has a rule: the call runs without a look (the fast path). */
export function needsNoDecision(definition: ToolDefinition, options: ApprovalsOptions | undefined): boolean {
  return definition.approval === undefined && options?.policy === undefined;
}

export function verdictFor(
  definition: ToolDefinition,
  args: unknown,
  ctx: ToolContext,
  call: ApprovalCall,
  options: ApprovalsOptions | undefined,
): ApprovalVerdict | Promise<ApprovalVerdict> {
  const own = definition.approval;
  if (own === 'ask') return 'ask';
  if (typeof own === 'function') return safely(() => own(args, ctx));
  const policy = options?.policy;
  if (policy !== undefined) return safely(() => policy(call));
  return 'allow';
}

/** The stricter of two rules: 'deny' wins, so a child can never loosen what is above it. */
export function tighter(a: ChildApprovals, b: ChildApprovals | undefined): ChildApprovals {
  return a === 'deny' || b === 'deny' ? 'deny' : 'ask';
}

export function isChildApprovals(value: unknown): value is ChildApprovals {
  return value === 'deny' || value === 'ask';
}
