// GraphError: the one way every failure of the contract is reported ([CG-ERR-1], [CG-SDK-1]).
// Codes, phases, default next actions and fixed messages come from the generated error registry,
// never from a hand-written table.
import {
  type ErrorCode,
  type NextAction,
  type Phase,
  REGISTRY,
  type RegistryEntry,
} from "../_generated/taxonomy.js";

export type { ErrorCode, NextAction, Phase } from "../_generated/taxonomy.js";

/** The JSON form of an error: the error object E of the contract. */
export interface ErrorObject {
  code: ErrorCode;
  phase: Phase;
  message: string;
  nextAction?: NextAction;
}

/**
 * A failure of the contract. Its public state is exactly the error object: `code`, `phase`,
 * `message` and `nextAction` (absent for codes without one, e.g. CG_GRAPH_CLOSED). No cause,
 * upstream text or request value is ever kept on it.
 */
export class GraphError extends Error {
  readonly code: ErrorCode;
  readonly phase: Phase;
  readonly nextAction: NextAction | undefined;

  constructor(code: ErrorCode, phase: Phase, message: string, nextAction?: NextAction) {
    super(message);
    this.name = "GraphError";
    this.code = code;
    this.phase = phase;
    this.nextAction = nextAction;
  }

  /** The error object E, members in the contract's order, without an absent nextAction. */
  toJSON(): ErrorObject {
    const object: ErrorObject = { code: this.code, phase: this.phase, message: this.message };
    if (this.nextAction !== undefined) object.nextAction = this.nextAction;
    return object;
  }

  /** The SDK-local display text ([CG-SDK-3]): `CODE (phase): message`. */
  override toString(): string {
    return `${this.code} (${this.phase}): ${this.message}`;
  }
}

export function registryEntry(code: ErrorCode): RegistryEntry {
  return REGISTRY[code];
}

/**
 * A GraphError with a fixed registry message: the `default` text, or the named `variant`
 * (`unreadable`, `unknownTool`, `cursor`, `body`). The phase defaults to the code's first
 * registry phase; the next action is always the code's registry default.
 */
export function graphError(code: ErrorCode, phase?: Phase, variant = "default"): GraphError {
  const entry = REGISTRY[code];
  const message = entry.messages[variant];
  if (message === undefined) throw new Error(`registry has no ${variant} message for ${code}`);
  return new GraphError(code, phase ?? firstPhase(entry), message, entry.defaultAction);
}

/** A GraphError of a pointer-message code ([CG-MSG-2]) carrying a message composed by the grammar. */
export function pointerError(code: ErrorCode, phase: Phase, message: string): GraphError {
  const entry = REGISTRY[code];
  if (!entry.pointerMessages) throw new Error(`${code} does not carry pointer messages`);
  return new GraphError(code, phase, message, entry.defaultAction);
}

function firstPhase(entry: RegistryEntry): Phase {
  const phase = entry.phases[0];
  if (phase === undefined) throw new Error(`registry entry ${entry.code} has no phase`);
  return phase;
}
