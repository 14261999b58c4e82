/**
 * What a memory store keeps after a tree's agents are disposed. A tree is a top-level session and every
 * session created under it (header.parentSession). It is live while any of its sessions is held (the
 * runtime acquires a session for every agent it creates, resumes or restores, and releases it when that
 * agent is disposed); a live tree is never evicted. A finished tree is kept whole or evicted whole:
 * `'all'` keeps it, `'none'` evicts it at once, `'recent'` keeps the most recent finished trees up to a
 * byte budget and evicts the oldest first.
 */
export type RetainPolicy = 'recent' | 'all' | 'none';

export interface TreeRecord {
  readonly root: string;
  readonly sessions: string[];
  /** Sessions of this tree currently held by an agent. */
  live: number;
  /** Estimated size of everything the tree's sessions hold. */
  bytes: number;
}

/** The finished trees a store still keeps, oldest first, and their size. */
export class Retention {
  private readonly finished = new Map<string, TreeRecord>();
  private finishedBytes = 0;

  constructor(
    private readonly policy: RetainPolicy,
    private readonly budgetBytes: number,
    private readonly evict: (tree: TreeRecord) => void,
  ) {}

  /** The tree's last held session was released. */
  treeFinished(tree: TreeRecord): void {
    if (this.policy === 'all') return;
    if (this.policy === 'none') {
      this.evict(tree);
      return;
    }
    this.finished.set(tree.root, tree);
    this.finishedBytes += tree.bytes;
    this.trim();
  }

  /** A session of a finished tree was acquired again (resumed): the tree is live, out of the queue. */
  treeRevived(tree: TreeRecord): void {
    if (this.finished.delete(tree.root)) this.finishedBytes -= tree.bytes;
  }

  /** A finished tree grew (a late write after its last release). */
  grew(tree: TreeRecord, bytes: number): void {
    if (!this.finished.has(tree.root)) return;
    this.finishedBytes += bytes;
    this.trim();
  }

  private trim(): void {
    for (const tree of this.finished.values()) {
      if (this.finishedBytes <= this.budgetBytes) return;
      this.finished.delete(tree.root);
      this.finishedBytes -= tree.bytes;
      this.evict(tree);
    }
  }
}
