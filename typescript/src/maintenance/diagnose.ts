// The diagnostics behind `doctor` (spec section 12, [CG-MAINT-4], [CG-MAINT-10]): every check of
// open, plus the readability of every declared `path` document and the executor's
// prerequisites. Problems are collected, not stopped at the first; the configuration is read
// once. The report is for the host: it may name local paths, never a secret.
import type { HostConfig as Configuration } from "../_generated/types/config.js";
import { checkConfig, type HostConfig, readConfigFile } from "../core/config.js";
import { readDocumentFile } from "../core/documents.js";
import { GraphError } from "../core/errors.js";
import { executorFactory } from "../core/executors/registry.js";
import { type LoadedProvider, loadSource } from "../core/load.js";
import { assembleSnapshot } from "../core/snapshot.js";

export type CheckStatus = "ok" | "warn" | "fail" | "skip";

export interface DiagnosticCheck {
  id: string;
  status: CheckStatus;
  message: string;
}

export interface DiagnosticsReport {
  status: "ok" | "failed";
  checks: DiagnosticCheck[];
  warnings: string[];
  /**
   * Set when the configuration could not be read at all ([CG-MAINT-10]): the error the CLI writes
   * as its envelope on stderr (CG_CONFIG_INVALID, `unreadable` message).
   */
  error?: GraphError;
}

export interface DiagnosticsOptions {
  /** Where a relative configuration path resolves, and an object's relative paths (default: the working directory). */
  cwd?: string;
  /** Bounds the executor's prerequisite probes. */
  signal?: AbortSignal;
}

const MAX_TEXT = 1024;

/** One line of printable text of at most 1024 characters ([CG-MAINT-1]). */
function reportText(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it removes
  const line = text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, " ").trim() || "-";
  const characters = [...line];
  return characters.length <= MAX_TEXT ? line : `${characters.slice(0, MAX_TEXT - 1).join("")}…`;
}

function plural(count: number, noun: string): string {
  if (count === 1) return `${count} ${noun}`;
  return `${count} ${noun.endsWith("y") ? `${noun.slice(0, -1)}ies` : `${noun}s`}`;
}

/** `N relation reaches` / `N relations reach`: the verb agrees with the count. */
function pluralSubject(count: number, noun: string, verb: string): string {
  return count === 1 ? `${plural(count, noun)} ${verb}es` : `${plural(count, noun)} ${verb}`;
}

/** `CODE: message`, with the report's detail in parentheses when there is one. */
function describeError(error: GraphError, detail?: string): string {
  const base = `${error.code}: ${error.message}`;
  return detail === undefined ? base : `${base} (${detail})`;
}

export async function diagnose(
  config: string | Configuration,
  options: DiagnosticsOptions = {},
): Promise<DiagnosticsReport> {
  const checks: DiagnosticCheck[] = [];
  const warnings: string[] = [];
  const add = (id: string, status: CheckStatus, message: string) =>
    checks.push({ id, status, message: reportText(message) });
  const finish = (error?: GraphError): DiagnosticsReport => ({
    status: checks.some((check) => check.status === "fail") ? "failed" : "ok",
    checks,
    warnings: warnings.map(reportText),
    ...(error === undefined ? {} : { error }),
  });

  // A path is read as open reads it; an object is judged as it is ([CG-MAINT-1]).
  let value: unknown = config;
  let baseDir = options.cwd ?? process.cwd();
  let outOfRangeInteger: Parameters<typeof checkConfig>[2];
  if (typeof config === "string") {
    const read = await readConfigFile(config, baseDir);
    if (!read.ok) {
      add("config", "fail", `Cannot read the configuration: ${read.path} ${read.cause}`);
      add("sources", "skip", "Not checked: the configuration cannot be read");
      return finish(read.error);
    }
    value = read.value;
    baseDir = read.baseDir;
    outOfRangeInteger = read.outOfRangeInteger;
  }
  let checked: HostConfig;
  try {
    checked = checkConfig(value, baseDir, outOfRangeInteger);
  } catch (error) {
    if (!(error instanceof GraphError)) throw error;
    add("config", "fail", describeError(error));
    add("sources", "skip", "Not checked: the configuration is invalid");
    return finish();
  }
  add("config", "ok", `The configuration is valid (${plural(checked.sources.length, "source")})`);

  const loaded: LoadedProvider[] = [];
  for (const source of checked.sources) {
    const outcome = await loadSource(source, checked.budgets);
    if (outcome.ok) {
      const provider = outcome.provider;
      loaded.push(provider);
      add(
        `source.${source.index}`,
        "ok",
        `Provider ${provider.providerId} version ${provider.version}: ${plural(provider.capabilities.length, "capability")}`,
      );
    } else {
      add(`source.${source.index}`, "fail", describeError(outcome.error, outcome.detail));
    }
  }
  const everySourceLoaded = loaded.length === checked.sources.length;

  let opened: ReturnType<typeof assembleSnapshot> | undefined;
  if (everySourceLoaded) {
    opened = assembleSnapshot(loaded, checked);
    // Steps 5 to 7 (provider ids, the capability budget, cycles) are what the relations check
    // covers; step 8 (the scope names loaded providers) is the open check's.
    if (opened.ok || opened.step === 8) {
      const capabilities = loaded.reduce((sum, provider) => sum + provider.capabilities.length, 0);
      const relations = loaded.reduce(
        (sum, provider) =>
          sum +
          provider.capabilities.reduce(
            (count, capability) => count + capability.relations.length,
            0,
          ),
        0,
      );
      add(
        "relations",
        "ok",
        `${plural(capabilities, "capability")} and ${plural(relations, "relation")} are valid`,
      );
      const dangling = loaded.flatMap((provider) =>
        provider.capabilities.flatMap((capability) =>
          capability.relations
            .filter((relation) => {
              const [targetProvider, localId] = relation.target.split("::") as [string, string];
              const target = loaded.find((candidate) => candidate.providerId === targetProvider);
              return target === undefined || !target.byLocalId.has(localId);
            })
            .map((relation) => `${capability.id} ${relation.kind} ${relation.target}`),
        ),
      );
      if (dangling.length > 0) {
        warnings.push(
          `${pluralSubject(dangling.length, "relation", "reach")} a provider that is not loaded (queries report them as partial): ${dangling.join("; ")}`,
        );
      }
    } else {
      add("relations", "fail", describeError(opened.error));
    }
  } else {
    add("relations", "skip", "Not checked: a source failed to load");
  }

  // [CG-MAINT-15]: one documents check per source, listed even when its source failed to load.
  for (const source of checked.sources) {
    const provider = loaded.find((candidate) => candidate.sourceIndex === source.index);
    if (provider === undefined) {
      add(`documents.${source.index}`, "skip", "Not checked: the source failed to load");
    } else {
      add(`documents.${source.index}`, ...(await documentCheck(provider, checked)));
    }
  }
  const bodies = checked.bodies;
  for (const provider of loaded) {
    const approved =
      bodies === "all" || (Array.isArray(bodies) && bodies.includes(provider.providerId));
    const hasLocalDocument = provider.capabilities.some((capability) =>
      capability.documents.some((document) => document.kind === "file"),
    );
    if (hasLocalDocument && !approved) {
      warnings.push(
        `Document bodies of provider ${provider.providerId} are not approved (documents.bodies): read_document answers CG_ACCESS_DENIED`,
      );
    }
  }

  const model = checked.model;
  if (model === undefined) {
    add(
      "executor",
      "skip",
      "No model executor is configured: match answers CG_MODEL_NOT_CONFIGURED (static queries work)",
    );
  } else {
    const factory = executorFactory(model.executor);
    const signal = options.signal ?? AbortSignal.timeout(30_000);
    try {
      const diagnosis = (await factory?.diagnose?.(model, signal)) ?? {
        status: "ok" as const,
        message: `The ${model.executor} executor is configured`,
      };
      add("executor", diagnosis.status, diagnosis.message);
    } catch {
      add(
        "executor",
        "fail",
        `The ${model.executor} executor's prerequisites could not be checked`,
      );
    }
  }

  if (opened?.ok === false && opened.step === 8 && !checks.some((c) => c.status === "fail")) {
    add("open", "fail", describeError(opened.error));
  } else if (opened?.ok === true && !checks.some((check) => check.status === "fail")) {
    const snapshot = opened.snapshot;
    const inScopeCapabilities = snapshot.listing.length;
    add(
      "open",
      "ok",
      `The graph opens: revision ${snapshot.revision}, ${plural(snapshot.scoped.length, "provider")} and ${plural(inScopeCapabilities, "capability")} in scope`,
    );
  } else {
    add("open", "skip", "Not checked: an earlier check failed");
  }
  return finish();
}

/** Whether every declared `path` document of a provider can be read ([CG-MAINT-4]). */
async function documentCheck(
  provider: LoadedProvider,
  config: HostConfig,
): Promise<[CheckStatus, string]> {
  let local = 0;
  let references = 0;
  const problems: string[] = [];
  for (const capability of provider.capabilities) {
    for (const document of capability.documents) {
      if (document.kind === "url") {
        references += 1;
        continue;
      }
      local += 1;
      const name = `${capability.id}/${document.id}`;
      if (provider.documentRoot === undefined) {
        problems.push(`${name} CG_DOCUMENT_ROOT_REQUIRED`);
        continue;
      }
      try {
        await readDocumentFile(
          provider.documentRoot,
          document.path as string,
          config.budgets.maxDocumentBytes,
        );
      } catch (error) {
        const code = error instanceof GraphError ? error.code : "CG_DOCUMENT_UNREADABLE";
        problems.push(`${name} ${code}`);
      }
    }
  }
  const who = `Provider ${provider.providerId}`;
  if (local === 0 && references === 0) return ["skip", `${who} declares no documents`];
  if (problems.length > 0) {
    return [
      "fail",
      `${who}: ${problems.length} of ${plural(local, "local document")} cannot be read: ${problems.join("; ")}`,
    ];
  }
  return [
    "ok",
    `${who}: ${plural(local, "local document")} readable, ${plural(references, "URL reference")}`,
  ];
}
