/**
 * brood as an ACP agent (`brood acp`): the SDK's agent side over a byte stream pair (stdio). Each
 * `session/new` is a fresh top-level agent; `session/prompt` runs one turn and streams its events as
 * updates; `session/cancel` cancels it; `session/load` resumes a stored session and replays it;
 * `session/close` disposes the agent. Nothing but protocol is written to `output`.
 */
import { Readable, Writable } from 'node:stream';
import type * as Acp from '@agentclientprotocol/sdk';
import type { Brood } from '../../brood.js';
import { errorMessage } from '../../errors.js';
import { isEventOf } from '../../sessions/event-types.js';
import type { Agent, SessionEvent } from '../../types.js';
import { broodVersion } from '../../version.js';
import { loadSdk } from '../client/agent-process.js';
import { guardLines } from './input-guard.js';
import { mountClientMcpServers, type Unmount, unmountAll } from './mcp.js';
import { askClient } from './permissions.js';
import { replayUpdates } from './replay.js';
import { ACP_STOP_REASONS, UpdateMapper } from './updates.js';

export interface AcpServerOptions {
  brood: Brood;
  /** A fresh top-level agent for a new session. */
  createAgent(): Promise<Agent>;
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  /** Diagnostics (stderr in the CLI). */
  log(line: string): void;
}

interface ServedSession {
  agent: Agent;
  /** The client's MCP servers mounted on this agent. */
  mcp: Unmount[];
  /** Set while a prompt runs: cancels it. */
  cancel: (() => void) | undefined;
}

/** Serves until the client closes the stream (or the input fails); resolves then, saying which. */
export async function serveAcp(options: AcpServerOptions): Promise<string> {
  const acp = await loadSdk();
  const sessions = new Map<string, ServedSession>();
  const { brood, log } = options;

  const session = (sessionId: string): ServedSession => {
    const served = sessions.get(sessionId);
    if (!served) throw acp.RequestError.resourceNotFound(sessionId);
    return served;
  };

  const app = acp
    .agent({ name: 'brood' })
    .onRequest('initialize', () => ({
      // brood speaks version 1; a client asking for another decides whether it can talk to us.
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: true,
        sessionCapabilities: { close: {} },
        promptCapabilities: { image: false, audio: false, embeddedContext: true },
        mcpCapabilities: { http: true, sse: true },
      },
      agentInfo: { name: 'brood', version: broodVersion() },
      authMethods: [],
    }))
    .onRequest('session/new', async ({ params }) => {
      const agent = await options.createAgent().catch((error: unknown) => {
        throw failure(acp, error);
      });
      sessions.set(agent.id, {
        agent,
        mcp: await mountFor(acp, brood, agent, params.mcpServers, log, true),
        cancel: undefined,
      });
      return { sessionId: agent.id };
    })
    .onRequest('session/load', async ({ params, client }) => {
      const live = sessions.get(params.sessionId);
      const agent = live?.agent ?? (await brood.resumeAgent(params.sessionId).catch(() => undefined));
      if (!agent) throw acp.RequestError.resourceNotFound(params.sessionId);
      if (!live)
        sessions.set(agent.id, {
          agent,
          mcp: await mountFor(acp, brood, agent, params.mcpServers, log, false),
          cancel: undefined,
        });
      const { events } = await brood.sessions.read(agent.id);
      for (const update of replayUpdates(agent.id, events))
        await client.notify('session/update', { sessionId: agent.id, update });
      return {};
    })
    .onRequest('session/prompt', async ({ params, client }) => {
      const served = session(params.sessionId);
      if (served.cancel)
        throw acp.RequestError.invalidRequest(undefined, `session ${params.sessionId} is already running a prompt`);
      return runPrompt(acp, brood, served, params, client, log);
    })
    .onNotification('session/cancel', ({ params }) => sessions.get(params.sessionId)?.cancel?.())
    .onRequest('session/close', async ({ params }) => {
      const served = sessions.get(params.sessionId);
      sessions.delete(params.sessionId);
      await unmountAll(served?.mcp ?? []);
      await served?.agent.dispose();
      return {};
    });

  let ended = false;
  options.input.once('end', () => (ended = true));
  const input = guardLines(options.input as Readable, (refusal) => {
    log(`brood acp: ${refusal.description}`);
    // A whole line in one write: it cannot interleave with the SDK's own (also whole-line) writes.
    options.output.write(refusal.response);
  });
  const stream = acp.ndJsonStream(
    Writable.toWeb(options.output as Writable) as WritableStream<Uint8Array>,
    Readable.toWeb(input) as ReadableStream<Uint8Array>,
  );
  const connection = app.connect(stream);
  await connection.closed;
  return ended
    ? 'the client closed the connection (end of stdin)'
    : `the connection failed: ${errorMessage(connection.signal.reason)}`;
}

/** Mounts the session's MCP servers; a failure disposes a freshly created agent and fails the request. */
async function mountFor(
  acp: typeof import('@agentclientprotocol/sdk'),
  brood: Brood,
  agent: Agent,
  servers: Acp.McpServer[],
  log: (line: string) => void,
  created: boolean,
): Promise<Unmount[]> {
  try {
    return await mountClientMcpServers(brood, agent, servers);
  } catch (error) {
    log(`brood acp: MCP servers of session ${agent.id}: ${errorMessage(error)}`);
    if (created) await agent.dispose().catch(() => undefined);
    throw failure(acp, error);
  }
}

function failure(acp: typeof import('@agentclientprotocol/sdk'), error: unknown): Error {
  const code = (error as { code?: unknown }).code;
  return acp.RequestError.internalError(
    { diagnostic: errorMessage(error), ...(typeof code === 'string' ? { code } : {}) },
    errorMessage(error),
  );
}

/**
 * One `session/prompt`: the turn runs while its events stream out as updates, all sent before the
 * answer. A turn the agent started on its own just before (a child's settlement notice) streams as
 * part of this prompt: ACP has no other place for it.
 */
async function runPrompt(
  acp: typeof import('@agentclientprotocol/sdk'),
  brood: Brood,
  served: ServedSession,
  params: Acp.PromptRequest,
  client: Acp.AgentContext,
  log: (line: string) => void,
): Promise<Acp.PromptResponse> {
  const { agent } = served;
  const controller = new AbortController();
  served.cancel = () => controller.abort();
  const unsubscribe = new AbortController();
  const events = agent.events({ descendants: true, signal: unsubscribe.signal });
  const mapper = new UpdateMapper(agent.id);
  let lastEnded = -1;
  let stopAt: number | undefined;
  // Sent in event order up to this prompt's turn-end; notify() resolves once the message is written,
  // so the prompt's answer (sent after the pump finished) cannot overtake any update.
  const pump = (async () => {
    for await (const event of events) {
      for (const update of mapper.map(event)) await client.notify('session/update', { sessionId: agent.id, update });
      if (event.type === 'approval-request') askClient(brood, client, agent.id, event, log);
      if (event.type === 'turn-end' && event.agentId === agent.id) {
        lastEnded = event.turn;
        if (stopAt !== undefined && lastEnded >= stopAt) return;
      }
    }
  })();
  try {
    const result = await agent.run(promptText(params.prompt), { signal: controller.signal });
    // run() settles right after its turn/end is durable: the last one in the log is this prompt's turn.
    stopAt = lastTurnEnd((await brood.sessions.read(agent.id)).events);
    if (lastEnded >= stopAt) unsubscribe.abort();
    await pump;
    if (result.stopReason === 'error')
      throw acp.RequestError.internalError(
        { diagnostic: result.diagnostic ?? 'the turn failed' },
        result.diagnostic ?? 'the turn failed',
      );
    const usage = {
      inputTokens: result.usage.inputTokens,
      outputTokens: result.usage.outputTokens,
      totalTokens: result.usage.inputTokens + result.usage.outputTokens,
    };
    return { stopReason: ACP_STOP_REASONS[result.stopReason], usage } as Acp.PromptResponse;
  } finally {
    served.cancel = undefined;
    unsubscribe.abort();
    await pump.catch(() => undefined);
  }
}

function lastTurnEnd(events: SessionEvent[]): number {
  let last = -1;
  for (const event of events) if (isEventOf(event, 'turn/end')) last = event.data.turn;
  return last;
}

/** The prompt's content as one message: text as is, embedded text resources and links inline. */
function promptText(blocks: Acp.ContentBlock[]): string {
  return blocks
    .map((block) => {
      if (block.type === 'text') return block.text;
      if (block.type === 'resource')
        return 'text' in block.resource
          ? `\n<resource uri="${block.resource.uri}">\n${block.resource.text}\n</resource>\n`
          : `[resource ${block.resource.uri}]`;
      if (block.type === 'resource_link') return `[${block.name}](${block.uri})`;
      return `[${block.type} content not supported]`;
    })
    .join('');
}
