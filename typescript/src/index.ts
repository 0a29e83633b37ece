// The public API of the capability-graph package.

export { OPERATIONS, type Operation, type OperationArgument } from "./_generated/operations.js";
export { CONTRACT_VERSION } from "./_generated/taxonomy.js";
// The types of the contract's schemas that Python exports as models and views too (the API
// parity table, docs/api.md, pairs them).
export type { Budgets } from "./_generated/types/budgets.js";
export type { CapabilitySummary } from "./_generated/types/capability-summary.js";
export type {
  CodexExecutorConfig,
  DocumentBodies,
  DocumentBodiesMode,
  DocumentPolicy,
  FileProviderSource,
  HostConfig,
  InlineProviderSource,
  LexicalExecutorConfig,
  ModelConfig,
  OpenAIExecutorConfig,
  ProviderSource,
  Scope,
  ScriptedExecutorConfig,
  ScriptedRaise,
  ScriptedRaiseExceptionStep,
  ScriptedRaiseStep,
  ScriptedReturnStep,
  ScriptedSleepStep,
  ScriptedStep,
} from "./_generated/types/config.js";
export type {
  Capability,
  DocumentDeclaration,
  FileDocumentDeclaration,
  ProviderDefinition,
  RelationDeclaration,
  UrlDocumentDeclaration,
} from "./_generated/types/definition.js";
export type {
  DescribeResult,
  EffectiveBudgets,
  ModelInfo,
  ProviderInfo,
} from "./_generated/types/describe-result.js";
export type { MediaType } from "./_generated/types/document-metadata.js";
export type { ListRequest } from "./_generated/types/list-request.js";
export type { ListResult, ListStatus } from "./_generated/types/list-result.js";
export type { MaintenanceReport } from "./_generated/types/maintenance-report.js";
export type { MatchCandidate } from "./_generated/types/match-candidate.js";
export type { MatchRequest } from "./_generated/types/match-request.js";
export type { MatchResult, MatchStatus } from "./_generated/types/match-result.js";
export type { ReadDocumentRequest } from "./_generated/types/read-document-request.js";
export type { ReadDocumentResult } from "./_generated/types/read-document-result.js";
export type { ReloadRequest } from "./_generated/types/reload-request.js";
export type {
  ProviderReloadError,
  ProviderReloaded,
  ProviderReloadOutcome,
  ReloadFailed,
  ReloadResult,
  ReloadSucceeded,
} from "./_generated/types/reload-result.js";
export type { RelationTraversal, ResolveRequest } from "./_generated/types/resolve-request.js";
export type {
  CapabilityDetail,
  DocumentMetadata,
  Edge,
  FileDocumentMetadata,
  Relation,
  RelationKind,
  ResolveResult,
  ResolveStatus,
  UnresolvedReason,
  UnresolvedRelation,
  UrlDocumentMetadata,
} from "./_generated/types/resolve-result.js";
export {
  type ErrorCode,
  type ErrorObject,
  GraphError,
  graphError,
  type NextAction,
  type Phase,
} from "./core/errors.js";
export {
  type CatalogEntry,
  type ContextValue,
  type Executor,
  type ExecutorDiagnosis,
  ExecutorError,
  type ExecutorFactory,
  type ExecutorJob,
  type ModelSection,
} from "./core/executors/protocol.js";
export {
  type CallOptions,
  CapabilityGraph,
  type JsonObject,
  type OpenOptions,
  parseRequestText,
  type RequestTextOutcome,
} from "./core/graph.js";
export {
  type CheckStatus,
  type DiagnosticCheck,
  type DiagnosticsOptions,
  type DiagnosticsReport,
  diagnose,
} from "./maintenance/diagnose.js";
export {
  type AnthropicTool,
  anthropicTools,
  type ObjectSchema,
  type OpenAIChatTool,
  type OpenAIResponsesTool,
  openAIChatTools,
  openAIResponsesTools,
  ToolAdapter,
  type ToolDefinition,
  type ToolOutcome,
  toolDefinitions,
} from "./surfaces/tools.js";
