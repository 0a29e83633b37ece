"""A user's program on the public SDK: typed host configuration, both ways to open, the Tool
Adapter's Responses export and a GraphError's text.

``test_sdk_api.py`` runs it; the typing session checks it with ``mypy --strict``, so the public
API stays usable from strictly typed code.
"""

from __future__ import annotations

import asyncio

from capability_graph import (
    BlockingCapabilityGraph,
    Capability,
    CapabilityGraph,
    GraphError,
    HostConfig,
    InlineProviderSource,
    LexicalExecutorConfig,
    ListResult,
    ProviderDefinition,
    ToolAdapter,
)

CONFIG = HostConfig(
    providers=[
        InlineProviderSource(
            definition=ProviderDefinition(
                provider_id="acme",
                name="Acme HTTP",
                version="1",
                capabilities=[
                    Capability(
                        id="route.validation",
                        name="Request validation",
                        description="Validate input before a route handler runs.",
                        tags=["http"],
                    )
                ],
            )
        )
    ],
    model=LexicalExecutorConfig(executor="lexical"),
)


async def main() -> None:
    async with CapabilityGraph.open(CONFIG) as graph:
        page: ListResult = await graph.list(tags=["http"])
        print(page.status, [item.id for item in page.items])
        tools = ToolAdapter(graph).openai_responses_tools()
        print([tool["name"] for tool in tools])

    opened = await CapabilityGraph.open(CONFIG)
    try:
        await opened.resolve(ids=["acme::missing"])
    except GraphError as error:
        print(error)
    finally:
        await opened.close()
    print("closed", opened.closed)


asyncio.run(main())
with BlockingCapabilityGraph.open(CONFIG) as blocking:
    resolved = blocking.resolve(ids=["acme::route.validation"])
    print("blocking", resolved.status, resolved.capabilities[0].provider_id)
