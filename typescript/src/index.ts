// The public API of the capability-graph package.

export { OPERATIONS, type Operation, type OperationArgument } from "./_generated/operations.js";
export type { HostConfig } from "./_generated/types/config.js";
export type { DescribeResult } from "./_generated/types/describe-result.js";
export type { ListRequest } from "./_generated/types/list-request.js";
export type { ListResult } from "./_generated/types/list-result.js";
export type { MaintenanceReport } from "./_generated/types/maintenance-report.js";
export type { MatchRequest } from "./_generated/types/match-request.js";
export type { MatchResult } from "./_generated/types/match-result.js";
export type { ReadDocumentRequest } from "./_generated/types/read-document-request.js";
export type { ReadDocumentResult } from "./_generated/types/read-document-result.js";
export type { ReloadRequest } from "./_generated/types/reload-request.js";
export type { ReloadResult } from "./_generated/types/reload-result.js";
export type { ResolveRequest } from "./_generated/types/resolve-request.js";
export type { ResolveResult } from "./_generated/types/resolve-result.js";
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
