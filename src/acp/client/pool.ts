/**
 * The provider's one agent process: started on first use, shared by every child session, replaced on
 * the next use after it died, ended by disposal. A failed start leaves nothing behind and the next
 * use tries again.
 */
import { BroodError } from '../../errors.js';
import { AgentProcess } from './agent-process.js';
import type { ResolvedAcpOptions } from './options.js';

export class AgentPool {
  private current: Promise<AgentProcess> | undefined;
  private disposed = false;

  constructor(
    readonly options: ResolvedAcpOptions,
    private readonly version: string,
  ) {}

  /** The live process, starting one if there is none (PROVIDER_FAILED when it cannot start). */
  async process(): Promise<AgentProcess> {
    if (this.disposed) throw new BroodError('DISPOSED', `the ACP provider '${this.options.name}' is disposed`);
    const existing = this.current;
    if (existing) {
      const agent = await existing.catch(() => undefined);
      if (agent && !agent.dead) return agent;
      if (this.current === existing) this.current = undefined;
      return this.process();
    }
    const starting = AgentProcess.start(this.options, this.version);
    this.current = starting;
    try {
      const agent = await starting;
      void agent.death.then(() => {
        if (this.current === starting) this.current = undefined;
      });
      if (this.disposed) {
        await agent.terminate();
        throw new BroodError('DISPOSED', `the ACP provider '${this.options.name}' is disposed`);
      }
      return agent;
    } catch (error) {
      if (this.current === starting) this.current = undefined;
      throw error;
    }
  }

  /** Ends the process (graceful, then SIGKILL); later calls reject DISPOSED. */
  async dispose(): Promise<void> {
    this.disposed = true;
    const agent = await this.current?.catch(() => undefined);
    this.current = undefined;
    await agent?.terminate();
  }
}
