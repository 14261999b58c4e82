// A custom subagent provider in the style of an out-of-process backend (a remote agent service).
// It advertises only what it enforces — here nothing: the backend takes a prompt and returns text, so
// every capability flag is false and brood refuses requests that would need one, instead of silently
// dropping a persona, a tool filter or a depth cap.
// Run: npm run build && node examples/custom-provider.mjs
import { createBrood, scriptedModels, subagentTool } from 'brood';

/** Stand-in for a remote service: a real one would POST the prompt and poll or stream the answer. */
function remoteService() {
  return {
    run(prompt, signal) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => resolve(`remote answer to "${prompt}"`), 100);
        signal.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            reject(new Error('cancelled'));
          },
          { once: true },
        );
      });
    },
  };
}

function remoteProvider(service) {
  let runs = 0;
  return {
    name: 'remote',
    capabilities: { persona: false, toolFilter: false, depthLimit: false, agentOptions: false, outputSchema: false },
    inheritsParentContext: false, // the remote agent never sees this conversation
    async start(request) {
      const controller = new AbortController();
      request.signal.addEventListener('abort', () => controller.abort(), { once: true });
      const usage = { inputTokens: 0, outputTokens: 0 }; // the service reports none; say so, do not guess
      // `result` resolves for every child-level outcome (never rejects), as the contract requires.
      const result = service.run(request.prompt, controller.signal).then(
        (output) => ({ output, stopReason: 'completed', usage }),
        (error) =>
          controller.signal.aborted
            ? { output: '', stopReason: 'aborted', usage }
            : { output: '', stopReason: 'error', diagnostic: error.message, usage },
      );
      return { id: `remote-${++runs}`, result, dispose: async () => controller.abort() };
    },
  };
}

const brood = createBrood({
  models: [
    scriptedModels({
      id: 'scripted',
      scripts: [
        {
          match: 'Plan',
          turns: [
            {
              toolCalls: [{ name: 'ask_remote', arguments: { description: 'remote check', prompt: 'Check the plan' } }],
            },
            { text: 'Lead got: {{results}}' },
          ],
        },
      ],
    }),
  ],
});

try {
  brood.subagents.register(remoteProvider(remoteService()));
  // The deployment behind the remote service owns recursion, so the instance sends no depth cap.
  brood.use(
    subagentTool({
      provider: 'remote',
      toolName: 'ask_remote',
      maxDepth: 'provider-managed',
      enableRunInBackground: false,
    }),
  );
  const lead = await brood.createAgent({ model: { provider: 'scripted', model: 'scripted' } });

  // 1. Through the delegation tool, as a model would use it.
  console.log((await lead.run('Plan the release.')).output);

  // 2. Directly through the runtime, as a host would.
  const run = await brood.subagents.start('remote', {
    parent: lead,
    prompt: 'Summarize the plan',
    signal: new AbortController().signal,
  });
  const direct = await run.result;
  await run.dispose();
  console.log(`direct: ${direct.stopReason}: ${direct.output}`);

  // 3. Honest capabilities: requests the provider cannot enforce are refused up front.
  const refused = await brood.subagents
    .start('remote', { parent: lead, prompt: 'x', persona: 'You are terse.', signal: new AbortController().signal })
    .catch((error) => error);
  console.log(`persona request: ${refused.code}`);
  try {
    brood.use(subagentTool({ provider: 'remote', toolName: 'ask_remote_capped', maxDepth: 2 }));
  } catch (error) {
    console.log(`numeric maxDepth on this provider: ${error.code}`);
  }
} finally {
  await brood.close();
}
