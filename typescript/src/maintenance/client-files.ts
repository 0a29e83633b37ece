// Over 400 lines: reading, splicing (JSON, JSONC, TOML) and writing a client file are one careful edit, kept together.
// The MCP clients' configuration files for `mcp-install` and `mcp-uninstall` ([CG-MAINT-8],
// [CG-MAINT-11] .. [CG-MAINT-14]): read a client's file (JSON, JSON with comments, TOML) with its
// byte order mark, mode and symbolic link, splice one server entry into its text or out of it
// (comments, order and layout kept), keep a backup, and write it atomically.
import { promises as fs } from "node:fs";
import path from "node:path";
import { isDeepStrictEqual } from "node:util";
import {
  applyEdits,
  type FormattingOptions,
  type Node as JsonNode,
  modify,
  type ParseError,
  parse as parseJsonc,
  parseTree,
} from "jsonc-parser";
import { parse as parseToml } from "smol-toml";
import { readBoundedFile } from "../core/files.js";
import {
  type Check,
  check,
  decodeUtf8,
  type MaintenanceIo,
  readIfExists,
  shownPath,
  writeAtomically,
} from "./report.js";

/** The largest client file read (as the reference). */
const MAX_CLIENT_FILE_BYTES = 16 * 1_048_576;

export type JsonObject = Record<string, unknown>;

/** How one MCP client keeps its servers. */
export interface ClientProfile {
  readonly display: string;
  readonly format: "json" | "toml";
  /** JSON with comments (and, with `trailingCommas`, trailing commas) is accepted. */
  readonly comments: boolean;
  readonly trailingCommas: boolean;
  /** The member (TOML: table) that holds the servers. */
  readonly container: string;
  /** The client's documented file, from the working folder and the environment. */
  readonly location: (io: MaintenanceIo) => string;
  /** How the client refers to an environment variable; undefined: --env is refused. */
  readonly envReference?: (name: string) => string;
  /** Members that come first in this client's entries. */
  readonly leading: JsonObject;
}

/** What both commands act on. */
export interface ClientRequest {
  readonly client: ClientProfile;
  readonly serverName: string;
  readonly graphConfig: string;
  readonly clientFile: string;
  readonly cwd: string;
}

// ---------------------------------------------------------------------------------------------
// The client's file

export interface ClientFile {
  readonly check: Check;
  /** The check of a file that does not exist, for mcp-uninstall (nothing will be created). */
  readonly absent: Check;
  readonly profile: ClientProfile;
  /** The file edited: the target of a symbolic link, else the path given. */
  readonly target: string;
  /** The file's bytes; undefined when it does not exist yet. */
  readonly bytes: Buffer | undefined;
  readonly mode: number | undefined;
  /** The text after a byte order mark, and the mark itself. */
  readonly text: string;
  readonly bom: string;
  /** The parsed document; undefined when the file cannot be used. */
  readonly document:
    | { readonly root: JsonObject; readonly servers: JsonObject | undefined }
    | undefined;
}

export async function readClientFile(request: ClientRequest): Promise<ClientFile> {
  const profile = request.client;
  const given = request.clientFile;
  const absent = check("client-config", "ok", `${shownPath(given, request.cwd)} does not exist`);
  const unusable = (target: string, reason: string): ClientFile => ({
    check: check(
      "client-config",
      "fail",
      `${shownPath(target, request.cwd)}: ${reason}: left untouched`,
    ),
    absent,
    profile,
    target,
    bytes: undefined,
    mode: undefined,
    text: "",
    bom: "",
    document: undefined,
  });

  let target = given;
  try {
    target = await fs.realpath(given);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT")
      return unusable(given, "cannot be resolved");
    const link = await fs.lstat(given).catch(() => undefined);
    if (link?.isSymbolicLink() === true)
      return unusable(given, "is a symbolic link to a missing file");
    return {
      check: check(
        "client-config",
        "ok",
        `${shownPath(given, request.cwd)} does not exist yet: it will be created`,
      ),
      absent,
      profile,
      target: given,
      bytes: undefined,
      mode: undefined,
      text: "",
      bom: "",
      document: { root: {}, servers: undefined },
    };
  }

  // Only a regular file, read with a bound: a fifo or a device is never waited on or read.
  const read = await readBoundedFile(target, MAX_CLIENT_FILE_BYTES);
  if (!read.ok) {
    if (read.reason === "too-large") {
      return unusable(target, `is larger than ${MAX_CLIENT_FILE_BYTES / 1_048_576} MiB`);
    }
    if (read.reason === "directory" || read.reason === "not-a-file") {
      return unusable(target, "is not a regular file");
    }
    return unusable(target, "cannot be read");
  }
  const bytes = Buffer.from(read.bytes);
  let mode: number;
  try {
    mode = (await fs.stat(target)).mode & 0o7777;
  } catch {
    return unusable(target, "cannot be read");
  }
  const decoded = decodeUtf8(bytes);
  if (decoded === undefined) return unusable(target, "not UTF-8 text");
  const bom = decoded.startsWith("\ufeff") ? "\ufeff" : "";
  const text = decoded.slice(bom.length);
  const formatName =
    profile.format === "toml" ? "TOML" : profile.comments ? "JSON (comments allowed)" : "JSON";
  // The JSON parser and the comparisons after it recurse: deeper nesting is refused first.
  if (profile.format === "json" && jsonNesting(text) > MAX_NESTING) {
    return unusable(target, `nested more than ${MAX_NESTING} levels deep`);
  }
  const root = parseDocument(profile, text);
  if (root === undefined) return unusable(target, `not valid ${formatName}`);
  const servers = root[profile.container];
  if (servers !== undefined && !isObject(servers)) {
    return unusable(target, `its ${profile.container} is not an object`);
  }
  return {
    check: check("client-config", "ok", `${shownPath(target, request.cwd)} is valid ${formatName}`),
    absent,
    profile,
    target,
    bytes,
    mode,
    text,
    bom,
    document: { root, servers },
  };
}

/** The deepest nesting of objects and arrays a client file may have (as the reference). */
const MAX_NESTING = 200;

/**
 * How deeply the objects and arrays of a JSON (or JSON with comments) text nest, counted without
 * recursion: brackets inside strings and comments do not count. The text need not be valid.
 */
function jsonNesting(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index];
    if (char === '"') {
      for (index += 1; index < text.length && text[index] !== '"'; index += 1) {
        if (text[index] === "\\") index += 1;
      }
    } else if (char === "/" && text[index + 1] === "/") {
      const end = text.indexOf("\n", index);
      index = end < 0 ? text.length : end;
    } else if (char === "/" && text[index + 1] === "*") {
      const end = text.indexOf("*/", index + 2);
      index = end < 0 ? text.length : end + 1;
    } else if (char === "{" || char === "[") {
      depth += 1;
      if (depth > deepest) deepest = depth;
    } else if (char === "}" || char === "]") {
      depth -= 1;
    }
  }
  return deepest;
}

/** The file's document as an object, or undefined when it is not valid in the client's format. */
function parseDocument(profile: ClientProfile, text: string): JsonObject | undefined {
  if (profile.format === "toml") {
    try {
      // TOML integers are 64-bit: one past 2^53 is valid TOML, read as a BigInt rather than
      // refused as "not valid TOML" ([CG-MAINT-8]: only a file that is not TOML is failed).
      return plainTables(parseToml(text, { integersAsBigInt: "asNeeded" })) as JsonObject;
    } catch {
      return undefined;
    }
  }
  const errors: ParseError[] = [];
  const value: unknown = parseJsonc(text, errors, {
    disallowComments: !profile.comments,
    allowTrailingComma: profile.trailingCommas,
    allowEmptyContent: false,
  });
  return errors.length === 0 && isObject(value) ? value : undefined;
}

/** smol-toml builds tables without a prototype; compare them as the plain objects they hold. */
function plainTables(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plainTables);
  if (typeof value !== "object" || value === null || value instanceof Date) return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, plainTables(item)]));
}

/**
 * The file's new text with the entry set (or removed when `entry` is undefined), spliced into
 * the old text. Throws unless the new text parses to exactly the old document with that one
 * change ([CG-MAINT-12]).
 */
export function spliceEntry(file: ClientFile, name: string, entry: JsonObject | undefined): string {
  const { profile } = file;
  let text: string;
  if (file.bytes === undefined) {
    if (entry === undefined) throw new Error("nothing to remove from a missing file");
    text =
      profile.format === "toml"
        ? tomlTable(name, entry)
        : `${JSON.stringify({ [profile.container]: { [name]: entry } }, null, 2)}\n`;
  } else if (profile.format === "toml") {
    const without = tomlWithoutTable(file.text, name);
    text =
      entry === undefined
        ? without
        : `${without}${separatorBefore(without)}${tomlTable(name, entry)}`;
  } else if (entry === undefined) {
    // Removal without reformatting: the neighbours keep their exact text.
    text = applyEdits(file.text, modify(file.text, [profile.container, name], undefined, {}));
  } else {
    text =
      insertJsonEntry(file.text, profile.container, name, entry) ??
      applyEdits(
        file.text,
        modify(file.text, [profile.container, name], entry, {
          formattingOptions: formattingOf(file.text),
        }),
      );
  }
  const expected = parseDocument(profile, file.text) ?? {};
  const servers = isObject(expected[profile.container])
    ? (expected[profile.container] as JsonObject)
    : {};
  if (entry === undefined) delete servers[name];
  else servers[name] = entry;
  expected[profile.container] = servers;
  const result = parseDocument(profile, text);
  // TOML has no empty-table syntax left once the last `[mcp_servers.X]` table is removed.
  if (profile.format === "toml" && Object.keys(servers).length === 0 && result !== undefined) {
    if (!Object.hasOwn(result, profile.container)) delete expected[profile.container];
  }
  if (!isDeepStrictEqual(result, expected)) {
    throw new Error("the spliced text does not parse to the expected document");
  }
  return `${file.bom}${text}`;
}

/**
 * Insert `"name": entry` as the last member of the container (created as the root's last member
 * when absent), in the layout around it: on one line in a one-line object, else on a line of its
 * own with the indentation of the member before it. Undefined when the text has a shape this
 * does not handle (the caller then lets jsonc-parser format the insertion).
 */
function insertJsonEntry(
  text: string,
  container: string,
  name: string,
  entry: JsonObject,
): string | undefined {
  const root = parseTree(text, [], { allowTrailingComma: true, disallowComments: false });
  if (root?.type !== "object") return undefined;
  const members = (root.children ?? []).filter(
    (member) => member.children?.[0]?.value === container,
  );
  if (members.length > 1) return undefined;
  const existing = members[0]?.children?.[1];
  if (existing === undefined) return insertMember(text, root, container, { [name]: entry });
  return existing.type === "object" ? insertMember(text, existing, name, entry) : undefined;
}

function insertMember(
  text: string,
  object: JsonNode,
  key: string,
  value: unknown,
): string | undefined {
  const { eol, unit } = layoutOf(text);
  const objectText = text.slice(object.offset, object.offset + object.length);
  const last = object.children?.at(-1);
  const member = (indent: string): string =>
    `${JSON.stringify(key)}: ${JSON.stringify(value, null, unit).split("\n").join(`${eol}${indent}`)}`;
  if (last === undefined) {
    // Only a truly empty object is rewritten; one holding a comment is left to jsonc-parser.
    if (!/^\{\s*\}$/.test(objectText)) return undefined;
    const outer = lineIndent(text, object.offset);
    const inner = `${outer}${unit}`;
    const replacement = `{${eol}${inner}${member(inner)}${eol}${outer}}`;
    return `${text.slice(0, object.offset)}${replacement}${text.slice(object.offset + object.length)}`;
  }
  const end = last.offset + last.length;
  if (!objectText.includes("\n")) {
    return `${text.slice(0, end)}, ${JSON.stringify(key)}: ${JSON.stringify(value)}${text.slice(end)}`;
  }
  const indent = lineIndent(text, last.offset);
  return `${text.slice(0, end)},${eol}${indent}${member(indent)}${text.slice(end)}`;
}

/** The whitespace that starts the line holding `offset`. */
function lineIndent(text: string, offset: number): string {
  const lineStart = text.lastIndexOf("\n", offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart, offset))?.[0] ?? "";
}

function layoutOf(text: string): { eol: string; unit: string } {
  const options = formattingOf(text);
  return {
    eol: options.eol ?? "\n",
    unit: options.insertSpaces === false ? "\t" : " ".repeat(options.tabSize ?? 2),
  };
}

/** The indentation and line ends the file already uses. */
function formattingOf(text: string): FormattingOptions {
  const indent = /^([ \t]+)\S/m.exec(text)?.[1] ?? "  ";
  return {
    insertSpaces: !indent.startsWith("\t"),
    tabSize: indent.startsWith("\t") ? 1 : indent.length,
    eol: text.includes("\r\n") ? "\r\n" : "\n",
  };
}

function separatorBefore(text: string): string {
  if (text === "") return "";
  return text.endsWith("\n\n") ? "" : text.endsWith("\n") ? "\n" : "\n\n";
}

/** A `[mcp_servers.NAME]` table: TOML basic strings share JSON's escapes for these values. */
function tomlTable(name: string, entry: JsonObject): string {
  const lines = [`[mcp_servers.${tomlKey(name)}]`];
  for (const [key, value] of Object.entries(entry))
    lines.push(`${tomlKey(key)} = ${tomlValue(value)}`);
  return `${lines.join("\n")}\n`;
}

function tomlKey(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key);
}

function tomlValue(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(tomlValue).join(", ")}]`;
  if (typeof value === "string") return JSON.stringify(value);
  throw new Error("only strings and arrays of strings are written to TOML");
}

/**
 * The text without the table `[mcp_servers.NAME]` and its sub-tables (from the header to the
 * next table of another name); the text unchanged when there is none. Headers are compared by
 * the key they parse to, so any quoting of the name is recognized.
 */
function tomlWithoutTable(text: string, name: string): string {
  const lines = text.split(/(?<=\n)/);
  const kept: string[] = [];
  let removing = false;
  for (const line of lines) {
    const header = tomlHeaderKeys(line);
    if (header !== undefined) removing = header[0] === "mcp_servers" && header[1] === name;
    if (!removing) kept.push(line);
  }
  return kept.join("");
}

/** The dotted key of a `[table]` or `[[array]]` header line, or undefined for any other line. */
function tomlHeaderKeys(line: string): string[] | undefined {
  const trimmed = line.trim();
  if (!trimmed.startsWith("[")) return undefined;
  try {
    let node: unknown = parseToml(trimmed.startsWith("[[") ? trimmed : `${trimmed}\n`);
    const keys: string[] = [];
    while (isObject(node) || (Array.isArray(node) && node.length === 1)) {
      const current: unknown = Array.isArray(node) ? node[0] : node;
      if (!isObject(current)) break;
      const names = Object.keys(current);
      if (names.length !== 1) break;
      const key = names[0] as string;
      keys.push(key);
      node = current[key];
    }
    return keys;
  } catch {
    return undefined;
  }
}

/** Keep the original as FILE.bak, else FILE.bak.2, FILE.bak.3 ..., never overwriting one. */
export async function keepBackup(file: string, bytes: Buffer, mode: number): Promise<string> {
  for (let index = 1; index <= 1000; index += 1) {
    const backup = index === 1 ? `${file}.bak` : `${file}.bak.${index}`;
    try {
      const handle = await fs.open(backup, "wx", mode);
      try {
        await handle.writeFile(bytes);
        await handle.chmod(mode);
        await handle.sync();
      } finally {
        await handle.close();
      }
      return backup;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
  throw new Error("no free backup name");
}

/**
 * Write the new text atomically over the target (its mode kept), only if the target is still
 * the file that was read ([CG-MAINT-22]; the caller holds the edit lock): "changed" when it was
 * changed or created since, "failed" when it could not be written.
 */
export async function writeClientFile(
  file: ClientFile,
  text: string,
): Promise<"written" | "changed" | "failed"> {
  try {
    if (file.bytes === undefined) {
      await fs.mkdir(path.dirname(file.target), { recursive: true });
      await writeAtomically(file.target, text, { exclusive: true });
    } else {
      const now = await readIfExists(file.target);
      if (now === undefined || !now.equals(file.bytes)) return "changed";
      await writeAtomically(file.target, text, file.mode === undefined ? {} : { mode: file.mode });
    }
    return "written";
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EEXIST" ? "changed" : "failed";
  }
}

export function unwritten(outcome: "changed" | "failed", shown: string): string {
  return outcome === "changed"
    ? `${shown} changed while it was being edited: not overwritten`
    : `${shown} could not be written: left untouched`;
}

// ---------------------------------------------------------------------------------------------
// The entry

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
