// `init [DIR]` (spec section 12.3, [CG-MAINT-5], [CG-MAINT-6]): scaffold a configuration, an
// example provider and one of its documents. Nothing is ever overwritten: every planned file is
// looked at first, and one that exists with other content makes the whole command a conflict
// that writes nothing. Each file is written atomically and only if it still does not exist.
import { promises as fs } from "node:fs";
import path from "node:path";
import { readBoundedFile } from "../../core/files.js";
import {
  type Check,
  check,
  decodeUtf8,
  emitReport,
  type MaintenanceIo,
  type Report,
  shownPath,
  writeAtomically,
} from "../../maintenance/report.js";
import { type CommandSpec, parseOrExit } from "./arguments.js";

export const INIT_SPEC: CommandSpec = {
  name: "init",
  help: "Scaffold a configuration, an example provider and a document.",
  options: [
    {
      flag: "--config",
      metavar: "FILE",
      help: "write the configuration at FILE (default: DIR/capability-graph.json); e.g. --config graph/capability-graph.json",
    },
    { flag: "--json", help: "print the report as JSON; e.g. --json | jq" },
    {
      flag: "--dry-run",
      help: "report what would be written; write nothing; e.g. --dry-run --json",
    },
  ],
  positionals: [
    {
      name: "DIR",
      metavar: "DIR",
      optional: true,
      help: "where to write the provider and its document (default: the configuration's folder, else the working folder)",
    },
  ],
  examples: ["init", "init my-graph --dry-run", "init --config graph/capability-graph.json"],
};

/** One file of the scaffold. */
interface PlannedFile {
  readonly id: string;
  readonly file: string;
  readonly content: string;
}

/** Run `init` with the arguments after the command name; returns the exit status. */
export async function runInit(args: readonly string[], io: MaintenanceIo): Promise<number> {
  const parsed = await parseOrExit(INIT_SPEC, args, io);
  if (typeof parsed === "number") return parsed;
  const configOption = parsed.values.get("--config")?.[0];
  const configFile = path.resolve(
    io.cwd,
    configOption ?? path.join(parsed.positional ?? ".", "capability-graph.json"),
  );
  const folder = path.resolve(io.cwd, parsed.positional ?? path.dirname(configFile));
  const plan = scaffold(configFile, folder);
  const report = await applyPlan(plan, parsed.switches.has("--dry-run"), io.cwd);
  return emitReport("init", report, parsed.switches.has("--json"), io);
}

/** The three files: the configuration names the provider by a path relative to its own folder. */
function scaffold(configFile: string, folder: string): PlannedFile[] {
  const providerFile = path.join(folder, "providers", "example.json");
  const documentFile = path.join(folder, "providers", "docs", "quick-start.md");
  let providerPath = path.relative(path.dirname(configFile), providerFile);
  if (path.isAbsolute(providerPath)) providerPath = providerFile;
  else providerPath = providerPath.split(path.sep).join("/");
  const configuration = {
    providers: [{ path: providerPath }],
    model: { executor: "lexical" },
  };
  return [
    { id: "configuration", file: configFile, content: jsonText(configuration) },
    { id: "provider", file: providerFile, content: jsonText(EXAMPLE_PROVIDER) },
    { id: "document", file: documentFile, content: QUICK_START },
  ];
}

function jsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

async function applyPlan(
  plan: readonly PlannedFile[],
  dryRun: boolean,
  cwd: string,
): Promise<Report> {
  const states = await Promise.all(plan.map((planned) => existingState(planned)));
  const conflict = states.includes("differs");
  const unreadable = states.includes("unreadable");
  const checks: Check[] = plan.map((planned, index) => {
    const shown = shownPath(planned.file, cwd);
    switch (states[index]) {
      case "same":
        return check(planned.id, "ok", `${shown} already exists with this content`);
      case "differs":
        return check(planned.id, "fail", `${shown} already exists and differs: not overwritten`);
      case "unreadable":
        return check(planned.id, "fail", `${shown} exists but cannot be read: not overwritten`);
      default:
        if (conflict || unreadable) return check(planned.id, "skip", `${shown} not written`);
        return check(planned.id, "ok", dryRun ? `Would create ${shown}` : `Created ${shown}`);
    }
  });
  if (conflict) return { status: "conflict", checks, warnings: [] };
  if (unreadable) return { status: "failed", checks, warnings: [] };
  // [CG-MAINT-19]: planned only when a file would be written; else what init itself reports.
  if (!states.includes("absent")) return { status: "ok", checks, warnings: [] };
  if (dryRun) return { status: "planned", checks, warnings: [] };

  for (const [index, planned] of plan.entries()) {
    if (states[index] !== "absent") continue;
    const shown = shownPath(planned.file, cwd);
    try {
      await fs.mkdir(path.dirname(planned.file), { recursive: true });
      await writeAtomically(planned.file, planned.content, { exclusive: true });
    } catch (error) {
      const reason =
        (error as NodeJS.ErrnoException).code === "EEXIST"
          ? "appeared while init ran: not overwritten"
          : "could not be written";
      checks[index] = check(planned.id, "fail", `${shown} ${reason}`);
      for (let later = index + 1; later < plan.length; later += 1) {
        const laterPlanned = plan[later];
        if (laterPlanned !== undefined && states[later] === "absent") {
          checks[later] = check(
            laterPlanned.id,
            "skip",
            `${shownPath(laterPlanned.file, cwd)} not written`,
          );
        }
      }
      return { status: "failed", checks, warnings: [] };
    }
  }
  return { status: "ok", checks, warnings: [] };
}

/**
 * Whether a planned file is absent, already there byte for byte, different, or unreadable. At
 * most the planned content's size + 1 bytes are read, from a regular file only: a folder, fifo
 * or device in the file's place differs without being waited on or read ([CG-MAINT-6]).
 */
async function existingState(
  planned: PlannedFile,
): Promise<"absent" | "same" | "differs" | "unreadable"> {
  const read = await readBoundedFile(planned.file, Buffer.byteLength(planned.content));
  if (read.ok) return decodeUtf8(Buffer.from(read.bytes)) === planned.content ? "same" : "differs";
  switch (read.reason) {
    case "missing":
      return "absent";
    case "unreadable":
      return "unreadable";
    default:
      return "differs";
  }
}

const EXAMPLE_PROVIDER = {
  providerId: "example",
  name: "Example product",
  version: "1",
  description: "An example provider written by init: replace it with what your product can do.",
  capabilities: [
    {
      id: "quick-start",
      name: "Quick start",
      description: "Install the example product and make a first request.",
      whenToUse: "Someone uses the example product for the first time and needs a working setup.",
      tags: ["example", "setup"],
      documents: [
        {
          id: "guide",
          title: "Quick start guide",
          role: "guide",
          locale: "en",
          path: "docs/quick-start.md",
        },
      ],
    },
    {
      id: "search",
      name: "Search",
      description: "Search the example catalog by keyword and filters.",
      whenToUse: "A user wants to find items by text.",
      tags: ["example", "search"],
      relations: [{ kind: "requires", target: "quick-start" }],
    },
  ],
};

const QUICK_START = `# Quick start

This document belongs to the example provider that \`capability-graph init\` wrote. The graph
serves it through \`read_document\` (CLI: \`capability-graph read example::quick-start guide\`).

1. Describe your product's capabilities in \`providers/example.json\`.
2. Check the configuration, the relations and the documents with \`capability-graph doctor\`.
3. Try a match: \`capability-graph match "find items by keyword"\`.
`;
