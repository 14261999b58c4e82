/**
 * One rule for "this peer has gone silent", whatever the peer: a pool thread whose heartbeat counter
 * on the watch board stopped moving, or a queue host or parent that sent no frame. A peer is silent
 * once what is heard of it has not changed for longer than the timeout. Pure: the caller says what
 * it heard and when (an injected clock in tests).
 */
export class SilenceJudge<K> {
  private readonly seen = new Map<K, { value: unknown; at: number }>();

  constructor(private readonly timeoutMs: number) {}

  /**
   * The peers listed, each with what is heard of it now (a heartbeat counter, a frame count); returns
   * those that have been silent for more than the timeout. Peers not listed are forgotten.
   */
  judge(peers: Iterable<readonly [K, unknown]>, now: number): K[] {
    const silent: K[] = [];
    const listed = new Set<K>();
    for (const [peer, value] of peers) {
      listed.add(peer);
      const seen = this.seen.get(peer);
      if (!seen || seen.value !== value) this.seen.set(peer, { value, at: now });
      else if (now - seen.at > this.timeoutMs) silent.push(peer);
    }
    for (const peer of this.seen.keys()) if (!listed.has(peer)) this.seen.delete(peer);
    return silent;
  }

  /** Something was heard of `peer` (any news resets its silence). */
  heard(peer: K, now: number): void {
    this.seen.set(peer, { value: Symbol('heard'), at: now });
  }

  /** Milliseconds since `peer` was last heard of; undefined when it never was. */
  quietFor(peer: K, now: number): number | undefined {
    const seen = this.seen.get(peer);
    return seen === undefined ? undefined : now - seen.at;
  }

  forget(peer?: K): void {
    if (peer === undefined) this.seen.clear();
    else this.seen.delete(peer);
  }
}
