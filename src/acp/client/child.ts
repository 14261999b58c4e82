/**
 * One brood child served by an ACP session: it is the child's driver runner. Each claimed message is
 * one `session/prompt` whose single text block is the message text; the agent's reported updates are
 * logged through the child's gateway (so the parent's session, usage tally and host events see them
 * as for any child); the stop reason ends the turn. Cancellation is `session/cancel`; a child that is
 * still running when the cancellation grace runs out gets the process killed (the runtime calls
 * `forceStop`), which every sibling on that process sees as PROVIDER_FAILED.
 */
import type * as Acp from '@agentclientprotocol/sdk';
import { BroodError, errorMessage } from '../../errors.js';
import type { ModelFinish } from '../../models/types.js';
import { TEXT_DELTA_EVENT } from '../../sessions/event-types.js';
import type { StopReason, Usage } from '../../types.js';
import { type DriverGateway, driverHostOver, type GatewayRemote } from '../../wire/gateway.js';
import type { ClaimedMessage, DriverPlan, TurnReport } from '../../wire/protocol.js';
import type { Activation, ActivationEnd, DriverRunner } from '../../wire/runner.js';
import type { AgentProcess, SessionHandlers } from './agent-process.js';
import type { FsEvent } from './fs.js';
import type { ResolvedAcpOptions } from './options.js';
import { decidePermission, permissionResponse } from './permissions.js';
import type { AgentPool } from './pool.js';
import { TurnTranscript } from './transcript.js';

const NO_USAGE: Usage = { inputTokens: 0, outputTokens: 0 };

interface RunningTurn {
  transcript: TurnTranscript;
  cancelled: boolean;
  /** Settles when the turn is cancelled (a pending permission question is then answered `cancelled`). */
  onCancel: Promise<void>;
  cancel: () => void;
}

const OUTCOMES_OF_ACP_STOP: Record<
  Acp.StopReason,
  { stopReason: StopReason; finish: ModelFinish; diagnostic?: string }
> = {
  end_turn: { stopReason: 'completed', finish: 'stop' },
  max_tokens: { stopReason: 'max-tokens', finish: 'max-tokens' },
  // The agent's own limit of model requests per turn: brood's step-limit stop reason.
  max_turn_requests: {
    stopReason: 'max-steps',
    finish: 'stop',
    diagnostic: 'the ACP agent stopped at its own limit of model requests for one turn (max_turn_requests)',
  },
  refusal: { stopReason: 'refusal', finish: 'refusal' },
  // The partial text the agent sent before it stopped is still its last message.
  cancelled: { stopReason: 'aborted', finish: 'stop' },
};

export class AcpChild implements DriverRunner, SessionHandlers {
  readonly kind = 'external' as const;
  private process: AgentProcess | undefined;
  private turn: RunningTurn | undefined;
  private childId = '';
  /** While `session/load` replays an old history: those updates are already in brood's session. */
  private loading = false;

  private constructor(
    private readonly pool: AgentPool,
    private readonly options: ResolvedAcpOptions,
    private sessionId: string,
  ) {}

  /** A fresh ACP session on the provider's process (`session/new`, bounded by timeoutMs). */
  static async create(pool: AgentPool, options: ResolvedAcpOptions): Promise<AcpChild> {
    const agent = await pool.process();
    const child = new AcpChild(pool, options, '');
    child.sessionId = await agent.newSession(child);
    child.process = agent;
    return child;
  }

  /** A child rebuilt from its session file: its ACP session is loaded on its next turn, if the agent can. */
  static restored(pool: AgentPool, options: ResolvedAcpOptions, childId: string, sessionId: string): AcpChild {
    const child = new AcpChild(pool, options, sessionId);
    child.childId = childId;
    return child;
  }

  /** Recorded in the child's descriptor (and used to load the session after a restart). */
  descriptor(): Record<string, unknown> {
    const agent = this.process;
    return {
      acp: { sessionId: this.sessionId, pid: agent?.pid, ...(agent?.agentInfo ? { agent: agent.agentInfo } : {}) },
    };
  }

  /** The child is gone: forget its ACP session (and close it where the agent supports that). */
  release(): void {
    this.process?.closeSession(this.sessionId);
  }

  activate(plan: DriverPlan, gateway: GatewayRemote): Activation {
    this.childId = plan.agentId;
    const host = driverHostOver(gateway);
    let stopped = false;
    let forced!: (end: ActivationEnd) => void;
    const stop = new Promise<ActivationEnd>((resolve) => (forced = resolve));
    const work = (async (): Promise<ActivationEnd> => {
      let claimed = plan.firstMessage ?? (await host.claimNext());
      while (claimed && !stopped) {
        const report = await this.runTurn(host, claimed);
        if (stopped) break;
        claimed = await host.endTurn(report);
      }
      return { kind: 'finished' };
    })().catch(
      (error: unknown): ActivationEnd => ({ kind: 'failed', stopReason: 'error', diagnostic: errorMessage(error) }),
    );
    return {
      done: Promise.race([work, stop]),
      cancel: () => this.cancelTurn(),
      forceStop: (reason) => {
        stopped = true;
        forced({ kind: 'failed', stopReason: 'aborted', diagnostic: reason });
        this.process?.kill(
          `ACP agent '${this.options.name}' (pid ${this.process.pid}) was stopped: child ${this.childId} ignored its cancellation (${reason})`,
        );
      },
    };
  }

  async close(): Promise<void> {
    this.release();
  }

  update(update: Acp.SessionUpdate): void {
    if (!this.loading) this.turn?.transcript.update(update);
  }

  async permission(request: Acp.RequestPermissionRequest): Promise<Acp.RequestPermissionResponse> {
    const turn = this.turn;
    if (!turn) return { outcome: { outcome: 'cancelled' } }; // no turn asked for this: nobody to decide for
    const decision = await decidePermission(this.options.permissions, request, this.childId, turn.onCancel);
    turn.transcript.note({
      type: 'acp/permission',
      data: {
        toolCallId: request.toolCall.toolCallId,
        ...(request.toolCall.title ? { title: request.toolCall.title } : {}),
        options: request.options.map(({ optionId, kind }) => ({ optionId, kind })),
        policy: typeof this.options.permissions === 'function' ? 'function' : this.options.permissions,
        decision: decision.decision,
        optionId: decision.optionId,
        ...(decision.note ? { note: decision.note } : {}),
      },
    });
    return permissionResponse(decision);
  }

  fs(event: FsEvent): void {
    this.turn?.transcript.note({ type: 'acp/fs', data: { ...event } });
  }

  private async runTurn(host: DriverGateway, claimed: ClaimedMessage): Promise<TurnReport> {
    const base = { turn: claimed.turn, usage: NO_USAGE };
    if (claimed.aborted) return { ...base, output: '', stopReason: 'aborted' };
    const transcript = new TurnTranscript((events) => void host.log(events).catch(() => undefined));
    // Streamed text reaches host subscribers as text deltas (never logged), as for a model-driven turn.
    transcript.onText = (delta) =>
      void host.log([{ type: TEXT_DELTA_EVENT, data: { turn: claimed.turn, delta } }]).catch(() => undefined);
    let cancel!: () => void;
    const onCancel = new Promise<void>((resolve) => (cancel = resolve));
    const turn: RunningTurn = { transcript, cancelled: false, onCancel, cancel };
    this.turn = turn;
    try {
      const agent = await this.ensureSession();
      if (turn.cancelled) {
        transcript.finish('stop');
        return { ...base, output: '', stopReason: 'aborted' };
      }
      // Messages the turn took with its own (quiet reports) come first, as in a model-driven history.
      const text = [...(claimed.joined ?? []).map((joined) => joined.text), claimed.text].join('\n\n');
      const response = await agent.prompt(this.sessionId, text, claimed.traceHeaders);
      const mapped = OUTCOMES_OF_ACP_STOP[response.stopReason] ?? {
        stopReason: 'error' as const,
        finish: 'error' as const,
        diagnostic: `the ACP agent answered an unknown stop reason ${JSON.stringify(response.stopReason)}`,
      };
      const usage = usageOf(response);
      const stopReason = turn.cancelled ? 'aborted' : mapped.stopReason;
      transcript.finish(turn.cancelled ? 'stop' : mapped.finish, usage);
      return {
        turn: claimed.turn,
        usage,
        output: transcript.output,
        stopReason,
        ...(mapped.diagnostic && stopReason === mapped.stopReason ? { diagnostic: mapped.diagnostic } : {}),
      };
    } catch (error) {
      transcript.finish('error');
      const failed = error instanceof BroodError && error.code === 'PROVIDER_FAILED';
      const diagnostic = failed ? `PROVIDER_FAILED: ${error.message}` : errorMessage(error);
      return {
        ...base,
        output: transcript.output,
        stopReason: turn.cancelled && !failed ? 'aborted' : 'error',
        diagnostic,
      };
    } finally {
      this.turn = undefined;
    }
  }

  private cancelTurn(): void {
    const turn = this.turn;
    if (!turn || turn.cancelled) return;
    turn.cancelled = true;
    turn.cancel();
    this.process?.cancel(this.sessionId);
  }

  /**
   * The process this child's session lives on. After the process died (or for a child restored from
   * its session file) the session is loaded into the current process when the agent supports
   * `session/load`; otherwise the session is lost and the turn fails saying so.
   */
  private async ensureSession(): Promise<AgentProcess> {
    if (this.process && !this.process.dead) return this.process;
    const lost = this.process?.deathMessage ?? 'the agent process that held it is gone';
    const agent = await this.pool.process();
    if (agent.capabilities.loadSession !== true) {
      throw new BroodError(
        'PROVIDER_FAILED',
        `the ACP session ${this.sessionId} was lost (${lost}) and the agent cannot load sessions`,
        { details: { provider: this.options.name } },
      );
    }
    this.loading = true;
    try {
      await agent.loadSession(this.sessionId, this);
    } catch (error) {
      if (error instanceof BroodError) throw error;
      throw new BroodError(
        'PROVIDER_FAILED',
        `the ACP session ${this.sessionId} was lost (${lost}) and loading it failed: ${errorMessage(error)}`,
        { details: { provider: this.options.name } },
      );
    } finally {
      this.loading = false;
    }
    this.process = agent;
    return agent;
  }
}

/** Usage, when the agent reports it (ACP's `usage` on the prompt response); otherwise none is invented. */
function usageOf(response: Acp.PromptResponse): Usage {
  const usage = (response as { usage?: { inputTokens?: unknown; outputTokens?: unknown } | null }).usage;
  const count = (value: unknown): number =>
    typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
  return usage ? { inputTokens: count(usage.inputTokens), outputTokens: count(usage.outputTokens) } : NO_USAGE;
}
