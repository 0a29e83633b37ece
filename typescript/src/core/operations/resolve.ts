// resolve_capabilities ([CG-RES-1] .. [CG-RES-6]): the named capabilities and, breadth first up
// to the requested depth, the targets of their relations of the requested kinds; a relation whose
// target is out of scope, not loaded or not found is reported as unresolved.
import { SCHEMA_DEFAULTS } from "../../_generated/defaults.js";
import type { ResolveRequest } from "../../_generated/types/resolve-request.js";
import type { ResolveResult } from "../../_generated/types/resolve-result.js";
import { graphError } from "../errors.js";
import type { CapabilityEntry, RelationKind } from "../load.js";
import { capabilityById, inScope } from "../snapshot.js";
import { checkNamedProviders, detailOf, type OperationContext } from "./common.js";

const ALL_KINDS: readonly RelationKind[] = ["requires", "parent", "specializes", "related"];

export async function resolveCapabilities(
  context: OperationContext,
  request: ResolveRequest,
): Promise<ResolveResult> {
  const { snapshot } = context;
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
