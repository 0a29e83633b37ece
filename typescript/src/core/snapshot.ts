// A snapshot: the complete, validated set of loaded providers answering queries, with its scope
// and revision. Steps 5 to 8 of open ([CG-OPEN-1]) judge the providers together.
import type { HostConfig } from "./config.js";
import { type GraphError, graphError, pointerError } from "./errors.js";
import type { CatalogEntry } from "./executors/protocol.js";
import { compareCodePoints, revisionOf } from "./json/canonical.js";
import type { CapabilityEntry, LoadedProvider, RelationEntry } from "./load.js";

const ACYCLIC_KINDS = ["requires", "parent", "specializes"] as const;

export interface Snapshot {
  /** Loaded providers in source order. */
  readonly providers: readonly LoadedProvider[];
  readonly byId: ReadonlyMap<string, LoadedProvider>;
  /** The configured scope (undefined: every loaded provider is in scope, [CG-SCOPE-1]). */
  readonly scope: readonly string[] | undefined;
  /** In-scope providers sorted by provider id. */
  readonly scoped: readonly LoadedProvider[];
  /** The graph revision over the in-scope providers ([CG-REV-2]). */
  readonly revision: string;
  /** Every in-scope capability in listing order ([CG-LIST-1]). */
  readonly listing: readonly CapabilityEntry[];
  /**
   * The listing as match catalog entries ([CG-MATCH-1]), frozen so executors may cache per
   * entry; built on the first match, since static queries never need it.
   */
  readonly catalog: () => readonly CatalogEntry[];
  /**
   * Filtered listings by filter (see `selectionOf` in operations/list.ts), kept for the pages
   * after the first: a few, the oldest dropped first.
   */
  readonly selections: Map<string, readonly CapabilityEntry[]>;
}

/** Whether a provider id is in scope: not excluded by a configured scope ([CG-SCOPE-1]). */
export function inScope(snapshot: Snapshot, providerId: string): boolean {
  return snapshot.scope === undefined || snapshot.scope.includes(providerId);
}

export function capabilityById(snapshot: Snapshot, fullId: string): CapabilityEntry | undefined {
  const separator = fullId.indexOf("::");
  if (separator < 0) return undefined;
  return snapshot.byId.get(fullId.slice(0, separator))?.byLocalId.get(fullId.slice(separator + 2));
}

export type Assembly =
  | { readonly ok: true; readonly snapshot: Snapshot }
  | { readonly ok: false; readonly error: GraphError; readonly step: 5 | 6 | 7 | 8 };

/** Steps 5 to 8 over providers loaded from every source, in source order. */
export function assembleSnapshot(
  providers: readonly LoadedProvider[],
  config: HostConfig,
): Assembly {
  const byId = new Map<string, LoadedProvider>();
  for (const provider of providers) {
    if (byId.has(provider.providerId)) {
      return {
        ok: false,
        step: 5,
        error: pointerError(
          "CG_CONFIG_INVALID",
          "config",
          `/providers/${provider.sourceIndex} repeats a providerId`,
        ),
      };
    }
    byId.set(provider.providerId, provider);
  }
  const total = providers.reduce((sum, provider) => sum + provider.capabilities.length, 0);
  if (total > config.budgets.maxCapabilities) {
    return { ok: false, step: 6, error: graphError("CG_CATALOG_TOO_LARGE", "load") };
  }
  if (hasAcyclicKindCycle(byId))
    return { ok: false, step: 7, error: graphError("CG_RELATION_CYCLE", "load") };
  for (const [index, providerId] of (config.scope ?? []).entries()) {
    if (!byId.has(providerId)) {
      return {
        ok: false,
        step: 8,
        error: pointerError(
          "CG_CONFIG_INVALID",
          "config",
          `/scope/providers/${index} names a provider that is not loaded`,
        ),
      };
    }
  }
  const scope = config.scope;
  const scopedProviders = [...byId.values()]
    .filter((provider) => scope === undefined || scope.includes(provider.providerId))
    .sort((left, right) => compareCodePoints(left.providerId, right.providerId));
  const scoped = scopedProviders;
  const listing = scoped.flatMap((provider) => provider.capabilities);
  return {
    ok: true,
    snapshot: {
      providers,
      byId,
      scope,
      scoped,
      revision: revisionOf(
        Object.fromEntries(scoped.map((provider) => [provider.providerId, provider.revision])),
      ),
      listing,
      catalog: memoize(() => listing.map(catalogEntryOf)),
      selections: new Map(),
    },
  };
}

/**
 * A cycle of one acyclic kind among loaded capabilities ([CG-REL-2]): an iterative depth-first
 * search per kind; a capability finished from anywhere is never searched again, and edges to
 * targets that are not loaded are ignored.
 */
function hasAcyclicKindCycle(byId: ReadonlyMap<string, LoadedProvider>): boolean {
  // Every loaded capability, numbered in search order, and its number by full id (one lookup
  // per edge followed, no slicing of the target); the search's state is one byte per number.
  const entries: CapabilityEntry[] = [];
  const numbers = new Map<string, number>();
  for (const provider of byId.values()) {
    for (const capability of provider.capabilities) {
      numbers.set(capability.id, entries.length);
      entries.push(capability);
    }
  }
  const OPEN = 1;
  const DONE = 2;
  for (const kind of ACYCLIC_KINDS) {
    const state = new Uint8Array(entries.length);
    // The path being searched: a capability's number and the index of its next relation.
    const path: number[] = [];
    const next: number[] = [];
    for (let start = 0; start < entries.length; start += 1) {
      if (state[start] !== 0 || !hasRelationOfKind(entries[start] as CapabilityEntry, kind)) {
        continue;
      }
      path.push(start);
      next.push(0);
      state[start] = OPEN;
      while (path.length > 0) {
        const top = path.length - 1;
        const relations = (entries[path[top] as number] as CapabilityEntry).relations;
        let pushed = false;
        while ((next[top] as number) < relations.length) {
          const relation = relations[next[top] as number] as RelationEntry;
          next[top] = (next[top] as number) + 1;
          if (relation.kind !== kind) continue;
          const target = numbers.get(relation.target);
          if (target === undefined) continue;
          const seen = state[target];
          if (seen === OPEN) return true;
          if (seen === DONE) continue;
          state[target] = OPEN;
          path.push(target);
          next.push(0);
          pushed = true;
          break;
        }
        if (!pushed) {
          state[path[top] as number] = DONE;
          path.pop();
          next.pop();
        }
      }
    }
  }
  return false;
}

function hasRelationOfKind(capability: CapabilityEntry, kind: string): boolean {
  for (const relation of capability.relations) if (relation.kind === kind) return true;
  return false;
}

function catalogEntryOf(capability: CapabilityEntry): CatalogEntry {
  return Object.freeze({
    id: capability.id,
    providerId: capability.providerId,
    name: capability.name,
    description: capability.description,
    tags: Object.freeze([...capability.tags]),
    ...(capability.whenToUse === undefined ? {} : { whenToUse: capability.whenToUse }),
  });
}

function memoize<T>(compute: () => T): () => T {
  let value: { readonly computed: T } | undefined;
  return () => {
    value ??= { computed: compute() };
    return value.computed;
  };
}
