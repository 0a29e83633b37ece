// Loading one provider source: step 4 of open ([CG-OPEN-1]) — read, pure-JSON rules, the count
// check, the definition schema, duplicate ids and document rules, local relation rules, and the
// document root. The first fault of the source is returned as a GraphError.
import { realpath, stat } from "node:fs/promises";
import { dirname } from "node:path";
import type { ProviderDefinition } from "../_generated/types/definition.js";
import {
  validateCapabilityId,
  validateDefinition,
  validateLocalCapabilityId,
  validateRelationKind,
} from "../_generated/validators.js";
import { type Budgets, readFaultCause, type SourceSpec, textFaultCause } from "./config.js";
import { type GraphError, graphError, pointerError } from "./errors.js";
import { readBoundedFile } from "./files.js";
import { compareCodePoints, revisionOf } from "./json/canonical.js";
import { firstPureFault, integralBeyondRange, isPlainObject } from "./json/pure.js";
import { type JsonPath, parseJsonBytes, pathKey, type TextFault } from "./json/text.js";
import {
  bestSchemaError,
  instancePath,
  keywordMessage,
  pureFaultMessage,
  textFaultMessage,
} from "./schemas.js";

export type RelationKind = "requires" | "parent" | "specializes" | "related";

export interface DocumentEntry {
  readonly id: string;
  readonly title: string;
  readonly role?: string;
  readonly locale?: string;
  readonly mediaType: "text/markdown" | "text/plain";
  readonly kind: "file" | "url";
  readonly url?: string;
  /** File documents: the declared relative path (never shown to a caller). */
  readonly path?: string;
}

export interface RelationEntry {
  readonly kind: RelationKind;
  /** The target as a full id. */
  readonly target: string;
}

export interface CapabilityEntry {
  readonly id: string;
  readonly providerId: string;
  readonly localId: string;
  readonly name: string;
  readonly description: string;
  readonly whenToUse?: string;
  readonly tags: readonly string[];
  readonly relations: readonly RelationEntry[];
  readonly documents: readonly DocumentEntry[];
}

export interface LoadedProvider {
  readonly sourceIndex: number;
  readonly providerId: string;
  readonly name: string;
  readonly version: string;
  readonly revision: string;
  /** Capabilities sorted by local id (code point order). */
  readonly capabilities: readonly CapabilityEntry[];
  readonly byLocalId: ReadonlyMap<string, CapabilityEntry>;
  /** The real absolute path of the document root; undefined for an inline source without one. */
  readonly documentRoot: string | undefined;
}

export type SourceLoad =
  | { readonly ok: true; readonly provider: LoadedProvider }
  | {
      readonly ok: false;
      readonly error: GraphError;
      /**
       * For the host's `doctor` report only ([CG-MAINT-10]): where the definition is (`file
       * PATH` or `inline definition`), why the file could not be read, the provider and the
       * relation concerned, separated by `; `. Never part of the error object.
       */
      readonly detail: string;
    };

const definitionFault = (message: string) => pointerError("CG_DEFINITION_INVALID", "load", message);

/** A relation that breaks a rule of [CG-REL-1], and which rule. */
interface RelationFault {
  readonly capability: string;
  readonly kind: string;
  readonly target: string;
  readonly reason: string;
}

/** Load and validate one source, completely, in the order of step 4. */
export async function loadSource(source: SourceSpec, budgets: Budgets): Promise<SourceLoad> {
  const where = source.kind === "file" ? `file ${source.path as string}` : "inline definition";
  let definition: unknown;
  let outOfRangeInteger: (path: () => JsonPath, value: number) => boolean;
  const fail = (error: GraphError, cause?: string, relation?: RelationFault): SourceLoad => {
    const parts = [cause === undefined ? where : `${where} ${cause}`];
    const providerId = isPlainObject(definition) ? definition.providerId : undefined;
    if (typeof providerId === "string") parts.push(`provider ${providerId}`);
    if (relation !== undefined) {
      parts.push(
        `capability ${relation.capability}: relation ${relation.kind} -> ${relation.target}: ${relation.reason}`,
      );
    }
    return { ok: false, error, detail: parts.join("; ") };
  };
  if (source.kind === "file") {
    const path = source.path as string;
    const read = await readBoundedFile(path, budgets.maxDefinitionBytes);
    if (!read.ok) {
      const cause = readFaultCause(read, budgets.maxDefinitionBytes);
      if (read.reason === "too-large") {
        return fail(definitionFault("/ exceeds budgets.maxDefinitionBytes"), cause);
      }
      return fail(
        pointerError(
          "CG_CONFIG_INVALID",
          "config",
          `/providers/${source.index}/path is not a readable regular file`,
        ),
        cause,
      );
    }
    const parsed = parseJsonBytes(read.bytes);
    if (!parsed.ok && !isTextFault(parsed.fault) && !opensAnObject(read.bytes)) {
      // A JSON text whose root is not an object: that first ([CG-MSG-19], [CG-MSG-20]).
      return fail(definitionFault("/ must be an object"));
    }
    if (!parsed.ok) {
      return fail(
        definitionFault(textFaultMessage(parsed.fault, "file")),
        textFaultCause(parsed.fault),
      );
    }
    definition = parsed.value;
    // A definition file's integers are judged on their literals ([CG-CONV-13]).
    const literals = parsed.bigIntegers;
    outOfRangeInteger = (path, value) =>
      integralBeyondRange(path, value) || (literals.size > 0 && literals.has(pathKey(path())));
  } else {
    definition = source.definition;
    outOfRangeInteger = source.outOfRangeInteger ?? integralBeyondRange;
  }
  // A root that is not an object comes before its other faults ([CG-MSG-19]).
  if (!isPlainObject(definition)) return fail(definitionFault("/ must be an object"));
  const pure = firstPureFault(definition, { outOfRangeInteger });
  if (pure !== undefined) return fail(definitionFault(pureFaultMessage(definition, pure)));
  // A private copy, so that later changes of the host's object do not change the graph.
  if (source.kind === "inline") definition = structuredClone(definition);
  if (isPlainObject(definition) && Array.isArray(definition.capabilities)) {
    if (definition.capabilities.length > budgets.maxCapabilities) {
      return fail(graphError("CG_CATALOG_TOO_LARGE", "load"));
    }
  }
  if (!validateDefinition(definition)) {
    const error = bestSchemaError(validateDefinition.errors ?? [], definition, validateDefinition);
    const path = error === undefined ? [] : instancePath(error.instancePath);
    if (path.length >= 3 && path[0] === "capabilities" && path[2] === "relations") {
      return fail(
        graphError("CG_RELATION_INVALID", "load"),
        undefined,
        schemaRelationFault(definition, path),
      );
    }
    return fail(
      definitionFault(error === undefined ? "/ is invalid" : keywordMessage(definition, error)),
    );
  }
  const declared = definition as unknown as ProviderDefinition;
  const ruleFault = definitionRuleFault(declared);
  if (ruleFault !== undefined) return fail(ruleFault);
  const relationRules = relationRuleFault(declared);
  if ("fault" in relationRules) {
    return fail(graphError("CG_RELATION_INVALID", "load"), undefined, relationRules.fault);
  }
  let documentRoot: string | undefined;
  try {
    documentRoot = await fixDocumentRoot(source);
  } catch {
    return fail(
      pointerError(
        "CG_CONFIG_INVALID",
        "config",
        `/providers/${source.index}/documentRoot must be an existing directory`,
      ),
    );
  }
  return {
    ok: true,
    provider: buildProvider(source.index, declared, relationRules.targets, documentRoot),
  };
}

/** Duplicate capability and document ids and `.` path segments, per capability in order ([CG-DEF-3], [CG-DEF-5]). */
function definitionRuleFault(definition: ProviderDefinition): GraphError | undefined {
  const capabilityIds = new Set<string>();
  for (const [index, capability] of definition.capabilities.entries()) {
    if (capabilityIds.has(capability.id))
      return definitionFault(`/capabilities/${index}/id repeats a capability id`);
    capabilityIds.add(capability.id);
    const documents = capability.documents ?? [];
    // Document ids seen: scanned when few, a set beyond.
    const documentIds = documents.length > 8 ? new Set<string>() : undefined;
    for (const [position, document] of documents.entries()) {
      if (repeats(documents, position, document.id, documentIds)) {
        return definitionFault(
          `/capabilities/${index}/documents/${position}/id repeats a document id`,
        );
      }
      if ("path" in document && typeof document.path === "string" && hasDotSegment(document.path)) {
        return definitionFault(
          `/capabilities/${index}/documents/${position}/path must be a relative POSIX path without empty or '.' segments`,
        );
      }
    }
  }
  return undefined;
}

/** Whether the document at `position` repeats an earlier id (recording it in `seen`, if given). */
function repeats(
  documents: readonly { readonly id: string }[],
  position: number,
  id: string,
  seen: Set<string> | undefined,
): boolean {
  if (seen !== undefined) {
    if (seen.has(id)) return true;
    seen.add(id);
    return false;
  }
  for (let earlier = 0; earlier < position; earlier += 1) {
    if ((documents[earlier] as { id: string }).id === id) return true;
  }
  return false;
}

/** Whether a POSIX path has a `.` segment (as `path.split("/").includes(".")`, without the split). */
function hasDotSegment(path: string): boolean {
  return path === "." || path.startsWith("./") || path.endsWith("/.") || path.includes("/./");
}

/**
 * The relation rules of one provider ([CG-REL-1]); targets in other providers are not looked up.
 * On success, each capability's relation targets as full ids, in order, for its entry.
 */
function relationRuleFault(
  definition: ProviderDefinition,
): { readonly fault: RelationFault } | { readonly targets: readonly (readonly string[])[] } {
  const providerId = definition.providerId;
  const localIds = new Set<string>();
  for (const capability of definition.capabilities) localIds.add(capability.id);
  const targets: string[][] = [];
  for (const capability of definition.capabilities) {
    const relations = capability.relations ?? [];
    const resolved: string[] = [];
    targets.push(resolved);
    if (relations.length === 0) continue;
    const own = `${providerId}::${capability.id}`;
    // Kind and full target of the relations seen: scanned when few, a set beyond.
    const seen = relations.length > 8 ? new Set<string>() : undefined;
    for (const [position, relation] of relations.entries()) {
      const target = resolveTarget(providerId, relation.target);
      const fault = (reason: string): { fault: RelationFault } => ({
        fault: { capability: own, kind: relation.kind, target: relation.target, reason },
      });
      if (!validateRelationKind(relation.kind)) return fault("the kind is not a relation kind");
      if (target === undefined) return fault("the target is not a capability id");
      if (target.providerId === providerId && !localIds.has(target.localId)) {
        return fault("the target is not a capability of this provider");
      }
      if (target.fullId === own) return fault("a capability cannot relate to itself");
      if (seen === undefined) {
        for (let earlier = 0; earlier < position; earlier += 1) {
          if (
            resolved[earlier] === target.fullId &&
            (relations[earlier] as { kind: string }).kind === relation.kind
          ) {
            return fault("the same relation is declared twice");
          }
        }
      } else {
        const key = `${relation.kind} ${target.fullId}`;
        if (seen.has(key)) return fault("the same relation is declared twice");
        seen.add(key);
      }
      resolved.push(target.fullId);
    }
  }
  return { targets };
}

/**
 * The relation a schema fault under `/capabilities/N/relations/M` points at, when the
 * definition has one there with a string kind and target (the report names it).
 */
function schemaRelationFault(
  definition: unknown,
  path: readonly (string | number)[],
): RelationFault | undefined {
  if (!isPlainObject(definition) || !Array.isArray(definition.capabilities)) return undefined;
  const capability = definition.capabilities[path[1] as number];
  if (!isPlainObject(capability) || !Array.isArray(capability.relations)) return undefined;
  const relation = capability.relations[path[3] as number];
  if (!isPlainObject(relation)) return undefined;
  const { kind, target } = relation;
  if (typeof kind !== "string" || typeof target !== "string") return undefined;
  if (typeof definition.providerId !== "string" || typeof capability.id !== "string") {
    return undefined;
  }
  const reason = validateRelationKind(kind)
    ? "the target is not a capability id"
    : "the kind is not a relation kind";
  return { capability: `${definition.providerId}::${capability.id}`, kind, target, reason };
}

function resolveTarget(providerId: string, target: string) {
  if (validateLocalCapabilityId(target)) {
    return { providerId, localId: target, fullId: `${providerId}::${target}` };
  }
  if (validateCapabilityId(target)) {
    const [targetProvider, localId] = target.split("::") as [string, string];
    return { providerId: targetProvider, localId, fullId: target };
  }
  return undefined;
}

/** The real absolute path of the source's document root ([CG-CFG-4], [CG-DOC-1]); throws when it is not a directory. */
async function fixDocumentRoot(source: SourceSpec): Promise<string | undefined> {
  const configured =
    source.documentRoot ?? (source.kind === "file" ? dirname(source.path as string) : undefined);
  if (configured === undefined) return undefined;
  const real = await realpath(configured);
  if (!(await stat(real)).isDirectory()) throw new Error("not a directory");
  return real;
}

/**
 * The provider's entries. Members are added one by one, optional ones only when declared, in the
 * order the results show them (no object spread: it costs a copy per object, which made this the
 * largest cost of opening a large definition).
 */
function buildProvider(
  sourceIndex: number,
  definition: ProviderDefinition,
  targets: readonly (readonly string[])[],
  documentRoot: string | undefined,
): LoadedProvider {
  const providerId = definition.providerId;
  const capabilities = definition.capabilities
    .map((capability, index) => capabilityEntry(providerId, capability, targets[index] ?? []))
    .sort((left, right) => compareCodePoints(left.localId, right.localId));
  return {
    sourceIndex,
    providerId,
    name: definition.name,
    version: definition.version,
    revision: revisionOf(definition),
    capabilities,
    byLocalId: new Map(capabilities.map((capability) => [capability.localId, capability])),
    documentRoot,
  };
}

type Writable<T> = { -readonly [K in keyof T]: T[K] };
type DeclaredCapability = ProviderDefinition["capabilities"][number];
type DeclaredDocument = NonNullable<DeclaredCapability["documents"]>[number];

function capabilityEntry(
  providerId: string,
  capability: DeclaredCapability,
  targets: readonly string[],
): CapabilityEntry {
  const entry: Partial<Writable<CapabilityEntry>> = {
    id: `${providerId}::${capability.id}`,
    providerId,
    localId: capability.id,
    name: capability.name,
    description: capability.description,
  };
  if (capability.whenToUse !== undefined) entry.whenToUse = capability.whenToUse;
  entry.tags = capability.tags === undefined ? [] : capability.tags.slice();
  const relations: RelationEntry[] = [];
  for (const [index, relation] of (capability.relations ?? []).entries()) {
    relations.push({ kind: relation.kind as RelationKind, target: targets[index] as string });
  }
  entry.relations = relations;
  const documents: DocumentEntry[] = [];
  for (const document of capability.documents ?? []) documents.push(documentEntry(document));
  entry.documents = documents;
  return entry as CapabilityEntry;
}

function documentEntry(document: DeclaredDocument): DocumentEntry {
  const entry: Partial<Writable<DocumentEntry>> = { id: document.id, title: document.title };
  if (document.role !== undefined) entry.role = document.role;
  if (document.locale !== undefined) entry.locale = document.locale;
  if ("url" in document && typeof document.url === "string") {
    entry.mediaType = mediaTypeOf(urlPath(document.url));
    entry.kind = "url";
    entry.url = document.url;
  } else {
    const path = (document as { path: string }).path;
    entry.mediaType = mediaTypeOf(path);
    entry.kind = "file";
    entry.path = path;
  }
  return entry as DocumentEntry;
}

/** `.md` and `.mdx` (any case) of the last segment are markdown; a leading dot starts no suffix ([CG-DEF-7]). */
export function mediaTypeOf(path: string): "text/markdown" | "text/plain" {
  const name = path.slice(path.lastIndexOf("/") + 1);
  const dot = name.lastIndexOf(".");
  if (dot <= 0) return "text/plain";
  const suffix = name.slice(dot + 1).toLowerCase();
  return suffix === "md" || suffix === "mdx" ? "text/markdown" : "text/plain";
}

/** The path of a URL, without scheme, authority, query and fragment. */
function urlPath(url: string): string {
  const afterAuthority = url.replace(/^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/, "");
  return afterAuthority.split(/[?#]/, 1)[0] ?? "";
}

/** A fault of the text itself (not UTF-8, a byte order mark, not JSON), reported as it is. */
function isTextFault(fault: TextFault): boolean {
  return fault.kind === "utf8" || fault.kind === "bom" || fault.kind === "syntax";
}

/** Whether a JSON text's first value opens an object (whitespace skipped). */
function opensAnObject(bytes: Uint8Array): boolean {
  for (const byte of bytes) {
    if (byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d) continue;
    return byte === 0x7b;
  }
  return false;
}
