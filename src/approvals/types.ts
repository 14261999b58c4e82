/** Approval types (docs/approvals.md). All public: src/index.ts exports this module whole. */
import type { ApprovalResolvedEvent, ApprovalVerdict, ToolContext } from '../types.js';

export type { ApprovalRequestEvent, ApprovalResolvedEvent, ApprovalVerdict } from '../types.js';

/** A tool's own rule: always ask, or decide per call from the parsed arguments. */
export type ToolApproval = 'ask' | ((args: never, ctx: ToolContext) => ApprovalVerdict | Promise<ApprovalVerdict>);

/** What the runtime's `policy` sees of a call (of a tool that has no `approval` of its own). */
export interface ApprovalCall {
  tool: string;
  args: unknown;
  callId: string;
  agentId: string;
  parentId: string | undefined;
  depth: number;
  /** True for a `tools.x()` call from inside run_code. */
  viaCode: boolean;
}

/** What a child may do with a call that needs approval: be refused, or ask the host like its root. */
export type ChildApprovals = 'deny' | 'ask';

/** createBrood's `approvals`. */
export interface ApprovalsOptions {
  policy?: (call: ApprovalCall) => ApprovalVerdict | Promise<ApprovalVerdict>;
  /** Default 'deny': a child's call that needs approval is refused. */
  children?: ChildApprovals;
  /** How long a request waits for `respond()` before it expires as denied (default 24 h). */
  timeoutMs?: number;
}

/** A request waiting for the host: the fields of the `approval-request` event. */
export interface ApprovalRequest {
  approvalId: string;
  agentId: string;
  parentId: string | undefined;
  depth: number;
  callId: string;
  tool: string;
  /** The arguments the model gave (parsed). */
  args: unknown;
  viaCode: boolean;
}

/** `respond()`'s decision: approve (optionally with replacement arguments) or deny with a message for the model. */
export type ApprovalResponse = { approve: true; args?: unknown } | { approve: false; message?: string };

export type ApprovalOutcome = ApprovalResolvedEvent['decision'];

/** `brood.approvals`. */
export interface Approvals {
  /** Requests waiting now, oldest first; with `agentId`, only that agent's own. */
  pending(filter?: { agentId?: string }): ApprovalRequest[];
  /** Decides a pending request; UNKNOWN_APPROVAL for an unknown or settled id, INVALID_ARGS for bad `args`. */
  respond(approvalId: string, response: ApprovalResponse): Promise<void>;
}
