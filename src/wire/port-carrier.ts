/** The thread carrier: one MessagePort, one structured-cloned postMessage per batch. */
import { type MessagePort, receiveMessageOnPort } from 'node:worker_threads';
import type { Carrier } from './link.js';

export function portCarrier(port: MessagePort): Carrier {
  return {
    send: (batch) => port.postMessage(batch),
    onBatch: (handler) => port.on('message', handler),
    onClose: (handler) => port.once('close', handler),
    close: () => port.close(),
    setActive: (active) => (active ? port.ref() : port.unref()),
    poll: () => receiveMessageOnPort(port)?.message,
  };
}
