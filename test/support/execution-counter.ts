/** Counts tool-body executions per `<agentId> <callId>`, for exactly-once checks. */
export class ExecutionCounter {
  readonly counts = new Map<string, number>();

  hit(agentId: string | undefined, callId: string): void {
    const key = `${agentId ?? '-'} ${callId}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  /** callId → count for one agent. */
  of(agentId: string): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [key, count] of this.counts) {
      const [agent, callId] = key.split(' ') as [string, string];
      if (agent === agentId) out[callId] = count;
    }
    return out;
  }

  max(): number {
    return Math.max(0, ...this.counts.values());
  }
}

/**
 * The definition of a slow, concurrency-safe tool that counts its executions (for exactly-once checks
 * under faults): `slow({ v })` waits `ms`, then answers `render(agentId, v)`.
 */
export function countingSlowTool(
  counter: ExecutionCounter,
  ms: number,
  render: (agentId: string | undefined, v: number) => string,
) {
  return {
    name: 'slow',
    description: 'takes a little while',
    parameters: { type: 'object', properties: { v: { type: 'number' } }, required: ['v'] },
    concurrencySafe: true,
    async execute(args: { v: number }, ctx: { agent: { id: string } | undefined; callId: string }) {
      counter.hit(ctx.agent?.id, ctx.callId);
      await new Promise((resolve) => setTimeout(resolve, ms));
      return render(ctx.agent?.id, args.v);
    },
  };
}
