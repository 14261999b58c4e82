// The delegation plugins (SPEC §11): the model-facing delegation tool and the shared job/message tools.

export type { SubagentToolConfig } from './config.js';
export { jobTools } from './job-tools.js';
export { messageTools } from './message-tools.js';
export type { BackgroundValue, ContinuableValue, ForegroundValue } from './routes.js';
export { subagentTool } from './subagent-tool.js';
