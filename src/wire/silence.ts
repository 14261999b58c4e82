/**
 * The rule for "this peer has gone silent": a peer is silent once what is heard of it (a pool
 * thread's heartbeat counter on the watch board; the batches a Redis carrier has received from a
 * queue host or parent, `beat` frames among them) has not changed for longer than the timeout. Pure:
 * the caller says what it heard and when (an injected clock in tests). The pool's hang watchdog, the
 * queue runner and `brood host` all use it.
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

  /** Forgets every peer (the watchdog stopped). */
  clear(): void {
    this.seen.clear();
  }
}
