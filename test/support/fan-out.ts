/** The scripted lead most fan-out tests use: on "fan out" it delegates `n` children in one message, then says `done`. */
export function fanOutScript(n: number, done = 'done') {
  return {
    match: 'fan out',
    turns: [
      {
        toolCalls: Array.from({ length: n }, (_, i) => ({
          name: 'subagent',
          arguments: { description: `c${i}`, prompt: `child ${i}` },
        })),
      },
      { text: done },
    ],
  };
}
