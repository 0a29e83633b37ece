// Executor name -> factory. The configuration's `model.executor` selects the factory; the schema
// (config.schema.json#/$defs/ModelConfig) has already restricted the names to the contract's.
import { lexicalExecutorFactory } from "./lexical.js";
import type { ExecutorFactory } from "./protocol.js";
import { scriptedExecutorFactory } from "./scripted.js";

const FACTORIES: Readonly<Record<string, ExecutorFactory>> = {
  scripted: scriptedExecutorFactory,
  lexical: lexicalExecutorFactory,
};

/** The factory of a named executor, or undefined when this implementation does not offer it. */
export function executorFactory(name: string): ExecutorFactory | undefined {
  return Object.hasOwn(FACTORIES, name) ? FACTORIES[name] : undefined;
}
