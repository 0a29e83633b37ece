// list_capabilities ([CG-LIST-1] .. [CG-LIST-4]): the capabilities of the snapshot in listing
// order, filtered by provider and tags, one page at a time behind a cursor bound to the filters.
import { SCHEMA_DEFAULTS } from "../../_generated/defaults.js";
import type { ListRequest } from "../../_generated/types/list-request.js";
import type { ListResult } from "../../_generated/types/list-result.js";
import { filterKey, issueCursor, readCursor } from "../cursor.js";
import { graphError } from "../errors.js";
import type { CapabilityEntry } from "../load.js";
import type { Snapshot } from "../snapshot.js";
import { checkNamedProviders, type OperationContext, summaryOf } from "./common.js";

/** How many filtered listings a snapshot keeps (each up to a pointer per capability). */
const SELECTIONS_KEPT = 4;

export async function listCapabilities(
  context: OperationContext,
  request: ListRequest,
): Promise<ListResult> {
  const { snapshot, config } = context;
  if (request.providers !== undefined) checkNamedProviders(snapshot, request.providers, "query");
  const providers = request.providers === undefined ? undefined : new Set(request.providers);
  const tags = request.tags === undefined ? [] : [...new Set(request.tags)];
  const selected = selectionOf(snapshot, providers, tags);
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

/**
 * The capabilities a request's filters select, in listing order: the listing itself when nothing
 * filters it, else a filtered copy kept on the snapshot, so that paging through a selection
 * costs each page its own items, not a pass over the catalog (which made paging through
 * everything quadratic).
 */
function selectionOf(
  snapshot: Snapshot,
  providers: ReadonlySet<string> | undefined,
  tags: readonly string[],
): readonly CapabilityEntry[] {
  if (providers === undefined && tags.length === 0) return snapshot.listing;
  const key = JSON.stringify([
    providers === undefined ? null : [...providers].sort(),
    [...tags].sort(),
  ]);
  const kept = snapshot.selections.get(key);
  if (kept !== undefined) return kept;
  const selected = snapshot.listing.filter(
    (capability) =>
      (providers === undefined || providers.has(capability.providerId)) &&
      tags.every((tag) => capability.tags.includes(tag)),
  );
  if (snapshot.selections.size >= SELECTIONS_KEPT) {
    const oldest = snapshot.selections.keys().next();
    if (oldest.done !== true) snapshot.selections.delete(oldest.value);
  }
  snapshot.selections.set(key, selected);
  return selected;
}
