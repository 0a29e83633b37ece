// describe_graph, list_capabilities and resolve_capabilities over one snapshot, after the request
// passed the closed-graph, size and shape checks ([CG-OP-1], [CG-LIST-1] .. [CG-LIST-4],
// [CG-RES-1] .. [CG-RES-6]); each step follows the tables of section 5.1.
import { SCHEMA_DEFAULTS } from "../../_generated/defaults.js";
import type { DescribeResult } from "../../_generated/types/describe-result.js";
import type { ListRequest } from "../../_generated/types/list-request.js";
import type { CapabilitySummary, ListResult } from "../../_generated/types/list-result.js";
import type { ResolveRequest } from "../../_generated/types/resolve-request.js";
import type { CapabilityDetail, ResolveResult } from "../../_generated/types/resolve-result.js";
import type { HostConfig } from "../config.js";
import { filterKey, issueCursor, readCursor } from "../cursor.js";
import { graphError, type Phase } from "../errors.js";
import type { CapabilityEntry, DocumentEntry, RelationKind } from "../load.js";
import { capabilityById, inScope, type Snapshot } from "../snapshot.js";

export function describeGraph(
  snapshot: Snapshot,
  config: HostConfig,
  executorName: string | undefined,
): DescribeResult {
  return {
    revision: snapshot.revision,
    providers: snapshot.scoped.map((provider) => ({
      providerId: provider.providerId,
      name: provider.name,
      version: provider.version,
      revision: provider.revision,
      capabilityCount: provider.capabilities.length,
    })),
    scope: {
      providers:
        snapshot.scope === undefined
          ? snapshot.providers.map((provider) => provider.providerId).sort()
          : [...snapshot.scope],
    },
    model:
      executorName === undefined
        ? { configured: false }
        : { configured: true, executor: executorName },
    budgets: { ...config.budgets },
  };
}

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

export function listCapabilities(
  snapshot: Snapshot,
  config: HostConfig,
  request: ListRequest,
): ListResult {
  if (request.providers !== undefined) checkNamedProviders(snapshot, request.providers, "query");
  const providers = request.providers === undefined ? undefined : new Set(request.providers);
  const tags = request.tags === undefined ? [] : [...new Set(request.tags)];
  const selected = snapshot.listing.filter(
    (capability) =>
      (providers === undefined || providers.has(capability.providerId)) &&
      tags.every((tag) => capability.tags.includes(tag)),
  );
  const filters = filterKey({ providers: request.providers, tags: request.tags });
  let offset = 0;
  if (request.cursor !== undefined) {
    const position = readCursor(
      config.cursorKey,
      request.cursor,
      snapshot.revision,
      filters,
      selected.length,
    );
    if (position === undefined) throw graphError("CG_INPUT_INVALID", "query", "cursor");
    offset = position;
  }
  const limit =
    request.limit ?? (SCHEMA_DEFAULTS["list-request.schema.json#/properties/limit"] as number);
  const end = offset + limit;
  const result: ListResult = {
    status: snapshot.listing.length === 0 ? "empty" : "ok",
    revision: snapshot.revision,
    items: selected.slice(offset, end).map(summaryOf),
  };
  if (end < selected.length)
    result.nextCursor = issueCursor(config.cursorKey, snapshot.revision, filters, end);
  return result;
}

const ALL_KINDS: readonly RelationKind[] = ["requires", "parent", "specializes", "related"];

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

export function resolveCapabilities(snapshot: Snapshot, request: ResolveRequest): ResolveResult {
  const ids = [...new Set(request.ids)];
  const providerOf = (id: string) => id.slice(0, id.indexOf("::"));
  checkNamedProviders(snapshot, ids.map(providerOf), "query");
  const roots = ids.map((id) => {
    const capability = capabilityById(snapshot, id);
    if (capability === undefined) throw graphError("CG_CAPABILITY_NOT_FOUND", "query");
    return capability;
  });
  const kinds = new Set<string>(request.relations?.kinds ?? ALL_KINDS);
  const depth =
    request.relations?.depth ??
    (SCHEMA_DEFAULTS[
      "resolve-request.schema.json#/$defs/RelationTraversal/properties/depth"
    ] as number);
  const returned = new Set(roots.map((capability) => capability.id));
  const capabilities = [...roots];
  const edges: ResolveResult["edges"] = [];
  const unresolved: ResolveResult["unresolved"] = [];
  let level = roots;
  for (let step = 1; step <= depth && level.length > 0; step += 1) {
    const discovered: CapabilityEntry[] = [];
    for (const capability of level) {
      for (const relation of capability.relations) {
        if (!kinds.has(relation.kind)) continue;
        const targetProvider = providerOf(relation.target);
        const reason = !inScope(snapshot, targetProvider)
          ? "out_of_scope"
          : !snapshot.byId.has(targetProvider)
            ? "provider_not_loaded"
            : capabilityById(snapshot, relation.target) === undefined
              ? "capability_not_found"
              : undefined;
        if (reason !== undefined) {
          unresolved.push({
            from: capability.id,
            kind: relation.kind,
            target: relation.target,
            reason,
          });
          continue;
        }
        edges.push({ from: capability.id, kind: relation.kind, to: relation.target });
        if (!returned.has(relation.target)) {
          returned.add(relation.target);
          const target = capabilityById(snapshot, relation.target) as CapabilityEntry;
          capabilities.push(target);
          discovered.push(target);
        }
      }
    }
    level = discovered;
  }
  return {
    status: unresolved.length === 0 ? "ok" : "partial",
    revision: snapshot.revision,
    capabilities: capabilities.map(detailOf),
    edges,
    unresolved,
  };
}
