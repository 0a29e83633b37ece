// What the operation handlers share ([CG-OP-1]): the context a handler runs in, the one handler
// signature every operation module exports, the provider checks of [CG-PREC-6] and [CG-PREC-7],
// and the summary and detail projections of a capability that list and resolve return.
import type { RequestOf, ResultOf, ToolName } from "../../_generated/operations.js";
import type { CapabilitySummary } from "../../_generated/types/list-result.js";
import type { CapabilityDetail } from "../../_generated/types/resolve-result.js";
import type { HostConfig } from "../config.js";
import { graphError, type Phase } from "../errors.js";
import type { Executor } from "../executors/protocol.js";
import type { JsonPath } from "../json/text.js";
import type { CapabilityEntry, DocumentEntry } from "../load.js";
import { inScope, type Snapshot } from "../snapshot.js";

/** What one call hands its handler: the graph's state at the call's start and the call's options. */
export interface OperationContext {
  /** The snapshot the call reads; a reload during the call does not change it. */
  readonly snapshot: Snapshot;
  readonly config: HostConfig;
  /** The executor of match and its name (undefined when none is configured). */
  readonly executor: Executor | undefined;
  readonly executorName: string | undefined;
  /** When the call started (performance.now()), for the match deadline. */
  readonly start: number;
  /** The caller's cancel signal (match only). */
  readonly signal: AbortSignal | undefined;
  /** Aborted when the graph closes: a running match ends with CG_GRAPH_CLOSED. */
  readonly closed: AbortSignal;
  /** Whether a number of the request was an integer literal beyond +-2^53 ([CG-MSG-13]). */
  readonly outOfRangeInteger: (path: () => JsonPath, value: number) => boolean;
  /** Keep a running piece of work until it settles, so that close() waits for it. */
  track<T>(running: Promise<T>): Promise<T>;
}

/** The one signature of every operation's handler: its request and result types are its tool's. */
export type Handler<T extends ToolName> = (
  context: OperationContext,
  request: RequestOf<T>,
) => Promise<ResultOf<T>>;

/** Every tool's handler, keyed by tool name; each entry typed by its own tool. */
export type HandlerRecord = { readonly [T in ToolName]: Handler<T> };

/**
 * The scope of every named provider, then the existence of every one ([CG-PREC-6],
 * [CG-PREC-7]); the first failing id in request order decides within each row.
 */
export function checkNamedProviders(
  snapshot: Snapshot,
  providerIds: readonly string[],
  phase: Phase,
): void {
  for (const providerId of providerIds) {
    if (!inScope(snapshot, providerId)) throw graphError("CG_ACCESS_DENIED", phase);
  }
  for (const providerId of providerIds) {
    if (!snapshot.byId.has(providerId)) throw graphError("CG_PROVIDER_NOT_FOUND", phase);
  }
}

export function summaryOf(capability: CapabilityEntry): CapabilitySummary {
  return {
    id: capability.id,
    providerId: capability.providerId,
    name: capability.name,
    description: capability.description,
    tags: [...capability.tags],
  };
}

export function detailOf(capability: CapabilityEntry): CapabilityDetail {
  return {
    ...summaryOf(capability),
    ...(capability.whenToUse === undefined ? {} : { whenToUse: capability.whenToUse }),
    relations: capability.relations.map((relation) => ({
      kind: relation.kind,
      target: relation.target,
    })),
    documents: capability.documents.map(documentMetadata),
  };
}

function documentMetadata(document: DocumentEntry) {
  return {
    id: document.id,
    title: document.title,
    ...(document.role === undefined ? {} : { role: document.role }),
    ...(document.locale === undefined ? {} : { locale: document.locale }),
    mediaType: document.mediaType,
    kind: document.kind,
    ...(document.kind === "url" ? { url: document.url as string } : {}),
  } as CapabilityDetail["documents"][number];
}
