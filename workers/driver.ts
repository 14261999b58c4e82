// Pool thread entry. On load it opens the thread's link to the parent (the other end of a fresh
// MessageChannel, sent on parentPort: piscina forwards it to the pool's 'message' event) and serves
// every activation the parent places on this thread over that one link. Piscina manages the thread's
// life (start, replacement, limits); activations are not piscina tasks (see README, Design).
import { MessageChannel, parentPort, threadId, workerData } from 'node:worker_threads';
import type { ModelProviderConfig } from '../src/models/types.js';
import { ThreadHost } from '../src/thread/thread-host.js';
import { LINK_HELLO } from '../src/wire/frames.js';
import { portCarrier } from '../src/wire/port-carrier.js';

let host: ThreadHost | undefined;
if (parentPort) {
  const { port1, port2 } = new MessageChannel();
  const models = (workerData as { models?: ModelProviderConfig[] } | undefined)?.models ?? [];
  host = new ThreadHost(portCarrier(port1), models);
  parentPort.postMessage({ [LINK_HELLO]: { threadId, port: port2 } }, [port2]);
}

/** The entry hands in its `import()` for custom adapter modules (see src/models/adapters.ts). */
export { useModuleImporter } from '../src/models/adapters.js';

/** Calls `warm` once, when this thread has run activations and is idle (the code cache is written then). */
export function whenWarm(warm: () => void): void {
  host?.onceWarm(warm);
}

/** Piscina requires a task function; brood never posts tasks (activations travel on the link). */
export default function noTasks(): never {
  throw new Error('brood pool threads take activations over their link, not as piscina tasks');
}
