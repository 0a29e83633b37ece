// read_document ([CG-DOC-1]): the checks of the document phase in the order of section 5.1
// (scope, provider, capability, document, reference-only, body approval, document root), then
// the bounded read of the body below the provider's document root (core/documents.ts).
import type { ReadDocumentRequest } from "../../_generated/types/read-document-request.js";
import type { ReadDocumentResult } from "../../_generated/types/read-document-result.js";
import { readDocumentFile } from "../documents.js";
import { graphError } from "../errors.js";
import { capabilityById, inScope } from "../snapshot.js";
import type { OperationContext } from "./common.js";

export async function readDocument(
  context: OperationContext,
  request: ReadDocumentRequest,
): Promise<ReadDocumentResult> {
  const { snapshot, config } = context;
  const providerId = request.capabilityId.slice(0, request.capabilityId.indexOf("::"));
  if (!inScope(snapshot, providerId)) throw graphError("CG_ACCESS_DENIED", "document");
  const provider = snapshot.byId.get(providerId);
  if (provider === undefined) throw graphError("CG_PROVIDER_NOT_FOUND", "document");
  const capability = capabilityById(snapshot, request.capabilityId);
  if (capability === undefined) throw graphError("CG_CAPABILITY_NOT_FOUND", "document");
  const document = capability.documents.find((candidate) => candidate.id === request.documentId);
  if (document === undefined) throw graphError("CG_DOCUMENT_NOT_FOUND", "document");
  if (document.kind === "url") throw graphError("CG_DOCUMENT_REFERENCE_ONLY", "document");
  const bodies = config.bodies;
  const approved = bodies === "all" || (Array.isArray(bodies) && bodies.includes(providerId));
  if (!approved) throw graphError("CG_ACCESS_DENIED", "document", "body");
  if (provider.documentRoot === undefined)
    throw graphError("CG_DOCUMENT_ROOT_REQUIRED", "document");
  const body = await readDocumentFile(
    provider.documentRoot,
    document.path as string,
    config.budgets.maxDocumentBytes,
  );
  return {
    capabilityId: request.capabilityId,
    documentId: request.documentId,
    mediaType: document.mediaType,
    bytes: body.bytes,
    sha256: body.sha256,
    text: body.text,
  };
}
