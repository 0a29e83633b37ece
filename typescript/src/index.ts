// The public API of the capability-graph package.

export { OPERATIONS, type Operation, type OperationArgument } from "./_generated/operations.js";
export {
  type CheckStatus,
  type DiagnosticCheck,
  type DiagnosticsOptions,
  type DiagnosticsReport,
  diagnose,
} from "./diagnostics.js";
export {
  type ErrorCode,
  type ErrorObject,
  GraphError,
  graphError,
  type NextAction,
  type Phase,
} from "./errors.js";
export {
  type CatalogEntry,
  type ContextValue,
  type Executor,
  type ExecutorDiagnosis,
  ExecutorError,
  type ExecutorFactory,
  type ExecutorJob,
  type ModelSection,
} from "./executors/protocol.js";
export {
  type CallOptions,
  CapabilityGraph,
  type JsonObject,
  type OpenOptions,
  parseRequestText,
  type RequestTextOutcome,
} from "./graph.js";
export {
  type AnthropicTool,
  anthropicTools,
  type OpenAIChatTool,
  type OpenAIResponsesTool,
  openAIChatTools,
  openAIResponsesTools,
  ToolAdapter,
  type ToolDefinition,
  type ToolOutcome,
  toolDefinitions,
} from "./tools.js";
