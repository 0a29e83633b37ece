// list_capabilities ([CG-LIST-1] .. [CG-LIST-4]): the capabilities of the snapshot in listing
// order, filtered by provider and tags, one page at a time behind a cursor bound to the filters.
import { SCHEMA_DEFAULTS } from "../../_generated/defaults.js";
import type { ListRequest } from "../../_generated/types/list-request.js";
import type { ListResult } from "../../_generated/types/list-result.js";
import { filterKey, issueCursor, readCursor } from "../cursor.js";
import { graphError } from "../errors.js";
import { checkNamedProviders, type OperationContext, summaryOf } from "./common.js";

export async function listCapabilities(
  context: OperationContext,
  request: ListRequest,
): Promise<ListResult> {
  const { snapshot, config } = context;
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
