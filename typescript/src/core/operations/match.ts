// match_capabilities ([CG-MATCH-1]): the context rules, the named providers, a configured
// executor and the catalog budget, in the order of section 5.1, then one run of the executor
// over the catalog of the snapshot (core/match.ts), tracked so that close() waits for it.
import { SCHEMA_DEFAULTS } from "../../_generated/defaults.js";
import type { MatchRequest } from "../../_generated/types/match-request.js";
import type { MatchResult } from "../../_generated/types/match-result.js";
import { configuredTimeoutMs } from "../config.js";
import { graphError } from "../errors.js";
import { runMatch } from "../match.js";
import { checkNamedProviders, type OperationContext } from "./common.js";
import { checkContext } from "./requests.js";

export async function matchCapabilities(
  context: OperationContext,
  request: MatchRequest,
): Promise<MatchResult> {
  const { snapshot, config } = context;
  const facts =
    request.context === undefined ? {} : checkContext(request.context, context.outOfRangeInteger);
  if (request.providers !== undefined) checkNamedProviders(snapshot, request.providers, "match");
  const executor = context.executor;
  if (executor === undefined || context.executorName === undefined)
    throw graphError("CG_MODEL_NOT_CONFIGURED", "match");
  const named = request.providers === undefined ? undefined : new Set(request.providers);
  // Every entry when no provider is named: the snapshot's catalog itself, not a copy of it.
  const catalog =
    named === undefined
      ? snapshot.catalog()
      : snapshot.catalog().filter((entry) => named.has(entry.providerId));
  if (catalog.length > config.budgets.maxCatalogEntries) {
    throw graphError("CG_CATALOG_TOO_LARGE", "match");
  }
  const timeoutMs = request.timeoutMs ?? configuredTimeoutMs(config);
  return context.track(
    runMatch({
      executor,
      executorName: context.executorName,
      request: request.request,
      context: facts,
      catalog,
      limit:
        request.limit ?? (SCHEMA_DEFAULTS["match-request.schema.json#/properties/limit"] as number),
      deadline: context.start + timeoutMs,
      maxOutputBytes: config.budgets.maxModelOutputBytes,
      revision: snapshot.revision,
      signal: context.signal,
      closed: context.closed,
    }),
  );
}
