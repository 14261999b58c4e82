/**
 * The texts every `model/request` event repeats: the system prompt, the tool names, the provider and
 * model. A driver in a pool thread (or on a queue worker) logs each request's as a fresh copy, and a
 * memory store keeps every event of a live tree: with a 5 KB system prompt, a 10,000-child fan-out's
 * three requests per child kept ~150 MB of copies of one text. The runtime keeps one copy of each
 * recent text and points the arriving events at it, so each arriving copy dies young.
 */

/** A templated prompt per child never repeats: the caches are bounded and start over when full. */
const MAX_SYSTEMS = 64;
const MAX_NAMES = 4096;

export class RequestTexts {
  private systems = new Map<string, string>();
  private names = new Map<string, string>();

  /** Points a logged request's texts at the copies already kept (in place: the event is the wire's). */
  share(data: Record<string, unknown>): void {
    const { system, tools, provider, model } = data;
    if (typeof system === 'string' && system !== '') data.system = this.kept(this.systems, MAX_SYSTEMS, system);
    if (typeof provider === 'string') data.provider = this.kept(this.names, MAX_NAMES, provider);
    if (typeof model === 'string') data.model = this.kept(this.names, MAX_NAMES, model);
    // A driver on this thread (the inline runner) logs its view's own frozen list: nothing to share.
    if (!Array.isArray(tools) || Object.isFrozen(tools)) return;
    for (let i = 0; i < tools.length; i++) {
      const name: unknown = tools[i];
      if (typeof name === 'string') tools[i] = this.kept(this.names, MAX_NAMES, name);
    }
  }

  private kept(cache: Map<string, string>, max: number, text: string): string {
    const kept = cache.get(text);
    if (kept !== undefined) return kept;
    if (cache.size >= max) cache.clear();
    cache.set(text, text);
    return text;
  }
}
