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
