/** A `subagent` tool call as a scripted model makes it; the description defaults to the prompt. */
export function subagentCall(prompt: string, description = prompt, extra: Record<string, unknown> = {}) {
  return { name: 'subagent', arguments: { description, prompt, ...extra } };
}

/** A subagent call labelled by the prompt's first word (span names then read `invoke_agent alpha`). */
export function labelledCall(prompt: string, extra: Record<string, unknown> = {}) {
  return subagentCall(prompt, prompt.split(' ')[0], extra);
}

/** The scripted lead most fan-out tests use: on "fan out" it delegates `n` children in one message, then says `done`. */
export function fanOutScript(n: number, done = 'done') {
  return {
    match: 'fan out',
    turns: [{ toolCalls: Array.from({ length: n }, (_, i) => subagentCall(`child ${i}`, `c${i}`)) }, { text: done }],
  };
}
