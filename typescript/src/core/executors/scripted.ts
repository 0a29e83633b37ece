// The `scripted` executor (executors.md section 7; [CG-MODEL-11]): deterministic steps, one per
// match that reaches the executor, the last one repeating; `"steps": []` answers `unknown`.
import { nodeTimersPromises } from "./on-first-use.js";
import {
  type Executor,
  ExecutorError,
  type ExecutorFactory,
  type ExecutorJob,
  type ModelSection,
} from "./protocol.js";

/** `sleepMs` steps nest at most this deep below a top-level step. */
const MAX_NESTING = 16;

type Step =
  | { readonly return: unknown }
  | {
      readonly raise: {
        readonly code: string;
        readonly nextAction?: string;
        readonly message?: string;
      };
    }
  | { readonly raiseException: string }
  | { readonly sleepMs: number; readonly then: Step };

class ScriptedExecutor implements Executor {
  readonly name = "scripted";
  #next = 0;

  constructor(private readonly steps: readonly Step[]) {}

  async execute(job: ExecutorJob): Promise<unknown> {
    if (this.steps.length === 0) return { status: "unknown", candidates: [] };
    // The position advances when the match reaches the executor, before any await.
    const step = this.steps[Math.min(this.#next, this.steps.length - 1)] as Step;
    this.#next += 1;
    return perform(step, job.signal);
  }
}

async function perform(step: Step, signal: AbortSignal): Promise<unknown> {
  let current = step;
  while ("sleepMs" in current) {
    // Interrupted by the deadline, cancellation and close like any executor work.
    await nodeTimersPromises().setTimeout(current.sleepMs, undefined, { signal });
    current = current.then;
  }
  if ("return" in current) return structuredClone(current.return);
  if ("raise" in current) {
    throw new ExecutorError(current.raise.code, current.raise.nextAction, current.raise.message);
  }
  throw new Error(current.raiseException);
}

function stepsOf(model: ModelSection): readonly Step[] {
  return (model.steps ?? []) as readonly Step[];
}

export const scriptedExecutorFactory: ExecutorFactory = {
  checkOptions(model) {
    // The schema checks each step's shape; the nesting limit is the one rule it cannot express,
    // with the one message of the `model` section that is not the schema's ([CG-MSG-18]).
    for (const [index, top] of stepsOf(model).entries()) {
      let step: Step = top;
      let pointer = `/model/steps/${index}`;
      for (let depth = 0; "sleepMs" in step; depth += 1) {
        step = step.then;
        pointer += "/then";
        if (depth + 1 > MAX_NESTING)
          return `${pointer} nests sleepMs steps more than ${MAX_NESTING} deep`;
      }
    }
    return undefined;
  },
  create(model) {
    return new ScriptedExecutor(structuredClone(stepsOf(model)));
  },
  async diagnose() {
    return { status: "ok", message: "The scripted executor is configured" };
  },
};
