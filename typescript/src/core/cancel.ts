// Waiting on an AbortSignal that many calls share (the graph's close signal, a caller's signal
// given to many matches): one 'abort' listener per signal, whatever the number of waiters, so
// that a thousand concurrent matches neither add a thousand listeners nor make Node print
// MaxListenersExceededWarning on stderr ([CG-MCP-3] keeps the MCP server's streams quiet).

interface Waiters {
  readonly callbacks: Set<() => void>;
  readonly listener: () => void;
}

const waiting = new WeakMap<AbortSignal, Waiters>();

/**
 * Call `callback` once when `signal` aborts. Returns the function that stops waiting; the
 * signal's one listener is removed when its last waiter stops.
 */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  let waiters = waiting.get(signal);
  if (waiters === undefined) {
    const callbacks = new Set<() => void>();
    const listener = () => {
      waiting.delete(signal);
      for (const waiter of [...callbacks]) waiter();
      callbacks.clear();
    };
    waiters = { callbacks, listener };
    waiting.set(signal, waiters);
    signal.addEventListener("abort", listener, { once: true });
  }
  const entry = () => callback();
  const { callbacks, listener } = waiters;
  callbacks.add(entry);
  return () => {
    if (!callbacks.delete(entry) || callbacks.size > 0) return;
    if (waiting.get(signal) === waiters) waiting.delete(signal);
    signal.removeEventListener("abort", listener);
  };
}
