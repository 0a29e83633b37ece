// The host configuration ([CG-CFG-1] .. [CG-CFG-9]) and steps 1 to 3 of open ([CG-OPEN-1]).
import { dirname, resolve } from "node:path";
import { BUDGET_DEFAULTS, type BudgetName, SCHEMA_DEFAULTS } from "../_generated/defaults.js";
import type { HostConfig as HostConfigValue } from "../_generated/types/config.js";
import { validateConfig } from "../_generated/validators.js";
import { cursorKey } from "./cursor.js";
import { type GraphError, graphError, pointerError } from "./errors.js";
import type { ModelSection } from "./executors/protocol.js";
import { executorFactory } from "./executors/registry.js";
import { type BoundedRead, readBoundedFile } from "./files.js";
import { firstPureFault, integralBeyondRange, isPlainObject } from "./json/pure.js";
import {
  CONFIG_SKIP_DEPTH,
  type JsonPath,
  parseJsonBytes,
  pathKey,
  type TextFault,
} from "./json/text.js";
import { pureFaultMessage, schemaFaultMessage } from "./schemas.js";

/** A configuration file is at most 1 MiB ([CG-CFG-1]). */
export const MAX_CONFIG_BYTES = 1_048_576;

export type Budgets = Readonly<Record<BudgetName, number>>;
export type DocumentBodies = "all" | "none" | readonly string[];

/** One provider source of the configuration, with its paths made absolute. */
export interface SourceSpec {
  readonly index: number;
  readonly kind: "file" | "inline";
  /** File sources: the absolute path of the definition file. */
  readonly path?: string;
  /** Inline sources: the definition as given (a private copy). */
  readonly definition?: unknown;
  /**
   * Inline sources: how to judge the definition's integers ([CG-CONV-6], [CG-CONV-13]) — from
   * the configuration file's literals when it was read from a file, else from the numbers.
   */
  readonly outOfRangeInteger?: (path: () => JsonPath, value: number) => boolean;
  /** The configured documentRoot, absolute (not yet resolved to its real path). */
  readonly documentRoot?: string;
}

/** A configuration that passed steps 1 to 3 of open. */
export interface HostConfig {
  /** The configuration value (a private copy). */
  readonly value: Readonly<Record<string, unknown>>;
  /** The folder relative paths resolve against ([CG-CFG-4]). */
  readonly baseDir: string;
  readonly sources: readonly SourceSpec[];
  /** The configured scope, in configuration order; undefined when none is configured. */
  readonly scope: readonly string[] | undefined;
  readonly bodies: DocumentBodies;
  readonly budgets: Budgets;
  readonly model: ModelSection | undefined;
  /** The key of the cursors' MAC, derived from the configuration identity ([CG-CUR-5]). */
  readonly cursorKey: Buffer;
}

export type ConfigFileRead =
  | {
      readonly ok: true;
      readonly value: unknown;
      readonly baseDir: string;
      readonly path: string;
      /** How to judge the integers of this configuration ([CG-CONV-6]): from its literals. */
      readonly outOfRangeInteger: (path: () => JsonPath, value: number) => boolean;
    }
  | {
      readonly ok: false;
      readonly error: GraphError;
      readonly path: string;
      readonly cause: string;
    };

/**
 * Why a trusted local file (a configuration or a definition file) could not be read, as the
 * predicate of a sentence whose subject is the file's path ([CG-MAINT-10]): for the host's
 * `doctor` report only, never in an error object.
 */
export function readFaultCause(read: BoundedRead & { ok: false }, limit: number): string {
  switch (read.reason) {
    case "missing":
      return "does not exist";
    case "directory":
      return "is a directory, not a file";
    case "not-a-file":
      return "is not a regular file";
    case "too-large":
      return `is larger than the limit of ${limit} bytes`;
    default:
      return "cannot be read";
  }
}

/** Why the bytes of a trusted local file are not a JSON text (see {@link readFaultCause}). */
export function textFaultCause(fault: TextFault): string {
  switch (fault.kind) {
    case "utf8":
      return `is not UTF-8 text (invalid byte at offset ${fault.offset})`;
    case "bom":
      return "starts with a byte order mark";
    case "syntax":
      return `has a JSON syntax error at line ${fault.line}, column ${fault.column}: ${fault.reason}`;
    case "duplicate":
      return "is not JSON data: an object has a duplicate key";
    case "long-integer":
      return "has an integer literal that is too long";
    case "depth":
      return "nests deeper than 32";
  }
}

/**
 * Step 1 of open: the configuration file is bounded UTF-8 JSON without a byte order mark or a
 * duplicate member name. Every failure is CG_CONFIG_INVALID with the `unreadable` message; the
 * cause (for the host's `doctor` report only) says why.
 */
export async function readConfigFile(path: string, cwd: string): Promise<ConfigFileRead> {
  const absolute = resolve(cwd, path);
  const fail = (cause: string): ConfigFileRead => ({
    ok: false,
    error: graphError("CG_CONFIG_INVALID", "config", "unreadable"),
    path: absolute,
    cause,
  });
  const read = await readBoundedFile(absolute, MAX_CONFIG_BYTES);
  if (!read.ok) return fail(readFaultCause(read, MAX_CONFIG_BYTES));
  // Inline definitions are judged from their own root, at load: a container is skipped only at
  // depth 33 of one of them ([CG-CONV-15]).
  const parsed = parseJsonBytes(read.bytes, { skipDepth: CONFIG_SKIP_DEPTH });
  if (!parsed.ok) return fail(textFaultCause(parsed.fault));
  const literals = parsed.bigIntegers;
  return {
    ok: true,
    value: parsed.value,
    baseDir: dirname(absolute),
    path: absolute,
    outOfRangeInteger: (path, value) =>
      integralBeyondRange(path, value) || (literals.size > 0 && literals.has(pathKey(path()))),
  };
}

const skipInlineDefinitions = (path: ReadonlyArray<string | number>) =>
  path.length === 3 && path[0] === "providers" && path[2] === "definition" ? "entirely" : undefined;

/**
 * Steps 2 and 3 of open: the pure-JSON rules and config.schema.json over the configuration,
 * inline definitions excepted ([CG-CFG-3]); repeated scope entries ([CG-CFG-6]); the executor
 * options the schema cannot express. Throws CG_CONFIG_INVALID with a pointer message.
 */
export function checkConfig(
  value: unknown,
  baseDir: string,
  outOfRangeInteger: (path: () => JsonPath, value: number) => boolean = integralBeyondRange,
): HostConfig {
  if (!isPlainObject(value)) throw configFault("/ must be an object");
  const pure = firstPureFault(value, { skip: skipInlineDefinitions, outOfRangeInteger });
  if (pure !== undefined) throw configFault(pureFaultMessage(value, pure));
  if (!validateConfig(value))
    throw configFault(schemaFaultMessage(value, validateConfig.errors ?? [], validateConfig));
  const config = value as unknown as HostConfigValue;
  const scope = config.scope?.providers;
  if (scope !== undefined && new Set(scope).size !== scope.length) {
    throw configFault("/scope/providers must not repeat items");
  }
  const model = config.model as ModelSection | undefined;
  if (model !== undefined) {
    const factory = executorFactory(model.executor);
    if (factory === undefined)
      throw configFault("/model/executor names an executor this implementation does not offer");
    const fault = factory.checkOptions?.(model);
    if (fault !== undefined) throw configFault(fault);
  }
  // A private copy: later changes of the host's object do not change the graph ([CG-DEF-10]).
  const copy = structuredClone(value) as Record<string, unknown>;
  const sources = (copy.providers as Array<Record<string, unknown>>).map((source, index) => {
    const documentRoot =
      typeof source.documentRoot === "string" ? resolve(baseDir, source.documentRoot) : undefined;
    if (typeof source.path === "string") {
      return {
        index,
        kind: "file" as const,
        path: resolve(baseDir, source.path),
        ...(documentRoot === undefined ? {} : { documentRoot }),
      };
    }
    const definitionPath = ["providers", index, "definition"];
    return {
      index,
      kind: "inline" as const,
      definition: source.definition,
      outOfRangeInteger: (path: () => JsonPath, number: number) =>
        outOfRangeInteger(() => [...definitionPath, ...path()], number),
      ...(documentRoot === undefined ? {} : { documentRoot }),
    };
  });
  const budgets = { ...BUDGET_DEFAULTS, ...(config.budgets ?? {}) } as Budgets;
  const bodies = (config.documents?.bodies ??
    SCHEMA_DEFAULTS[
      "config.schema.json#/$defs/DocumentPolicy/properties/bodies"
    ]) as DocumentBodies;
  return {
    value: copy,
    baseDir,
    sources,
    scope: scope === undefined ? undefined : [...scope],
    bodies,
    budgets,
    model: copy.model as ModelSection | undefined,
    cursorKey: cursorKey(copy),
  };
}

function configFault(message: string): GraphError {
  return pointerError("CG_CONFIG_INVALID", "config", message);
}

/** The default match deadline: the model section's `timeoutMs`, else the schema default. */
export function configuredTimeoutMs(config: HostConfig): number {
  const configured = config.model?.timeoutMs;
  if (typeof configured === "number") return configured;
  return SCHEMA_DEFAULTS[
    "config.schema.json#/$defs/ScriptedExecutorConfig/properties/timeoutMs"
  ] as number;
}
