// describe_graph ([CG-OP-1]): the snapshot's providers in scope, the trusted scope, whether a
// model executor is configured, and the budgets in force.
import type { DescribeRequest } from "../../_generated/types/describe-request.js";
import type { DescribeResult } from "../../_generated/types/describe-result.js";
import type { OperationContext } from "./common.js";

export async function describeGraph(
  context: OperationContext,
  _request: DescribeRequest,
): Promise<DescribeResult> {
  const { snapshot, config, executorName } = context;
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
