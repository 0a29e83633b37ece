// Executor name -> factory. The configuration's `model.executor` selects the factory; the schema
// (config.schema.json#/$defs/ModelConfig) has already restricted the names to the contract's.
import { codexExecutorFactory } from "./codex.js";
import { lexicalExecutorFactory } from "./lexical.js";
import { openaiExecutorFactory } from "./openai.js";
import type { ExecutorFactory } from "./protocol.js";
import { scriptedExecutorFactory } from "./scripted.js";

const FACTORIES: Readonly<Record<string, ExecutorFactory>> = {
  scripted: scriptedExecutorFactory,
  lexical: lexicalExecutorFactory,
  openai: openaiExecutorFactory,
  codex: codexExecutorFactory,
};

/** The factory of a named executor, or undefined when this implementation does not offer it. */
export function executorFactory(name: string): ExecutorFactory | undefined {
  return Object.hasOwn(FACTORIES, name) ? FACTORIES[name] : undefined;
}
