/**
 * What happens when a cancelled turn does not end within pool.cancelGraceMs (SPEC §10.4). A driver
 * that ignores cancellation is stopped by force (its thread recycled). But a driver waiting for a
 * parent-side tool call — a tool ignoring its signal, a provider whose result never settles — did
 * honour the cancel: those calls are answered ABORTED instead, the turn's diagnostic names them, and
 * the thread is left alone. Only if the driver then still does not finish within another grace
 * period is it stopped by force.
 */
import type { Clock } from '../clock.js';
import type { CurrentTurn } from './turns.js';

export interface GraceTarget {
  /** Still the agent's running turn (a finished turn needs nothing). */
  isCurrent(turn: CurrentTurn): boolean;
  forceStop(reason: string): void;
}

export function armCancelGrace(
  turn: CurrentTurn,
  graceMs: number,
  target: GraceTarget,
  timers: Pick<Clock, 'setTimeout'>,
): void {
  const arm = (onExpiry: () => void): void => {
    const cancel = timers.setTimeout(() => {
      if (target.isCurrent(turn)) onExpiry();
    }, graceMs);
    turn.cleanup.push(cancel);
  };
  const stopByForce = (): void => {
    turn.heldDiagnostic = undefined;
    target.forceStop(`stopped by force: the driver ignored cancellation for ${graceMs} ms`);
  };
  arm(() => {
    const held = [...(turn.held ?? [])];
    if (held.length === 0) return stopByForce();
    const names = held.map((call) => `${call.name} (call ${call.callId})`).join(', ');
    const one = held.length === 1;
    turn.heldDiagnostic = `cancelled, but ${one ? 'tool call' : 'tool calls'} ${names} ignored cancellation for ${graceMs} ms; ${one ? 'its result was' : 'their results were'} abandoned`;
    for (const call of held)
      call.abandon(`Tool "${call.name}" ignored cancellation for ${graceMs} ms; its result was abandoned`);
    arm(stopByForce);
  });
}
