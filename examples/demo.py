"""The demo (``nox -s demo``): open the quickstart graph and exercise every operation through
the SDK.

It prints one JSON line per step, then reproduces the contract's reference GraphError example
(CG-ERR-7: resolving ``acme::missing`` on an empty provider; spec/capability-graph/examples/
resolve-request/valid/seed-missing-capability.json) and checks it is exactly that JSON. Exits 1
if any step does not behave as the contract says.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from capability_graph import CapabilityGraph, GraphError

HERE = Path(__file__).resolve().parent
REFERENCE_ERROR = {
    "code": "CG_CAPABILITY_NOT_FOUND",
    "phase": "query",
    "message": "Requested capability does not exist",
    "nextAction": "refresh",
}


def show(step: str, value: object) -> None:
    print(json.dumps({"step": step, "value": value}, ensure_ascii=False))


async def main() -> int:
    async with await CapabilityGraph.open(HERE / "quickstart" / "capability-graph.json") as graph:
        show("describe", (await graph.describe()).to_json())
        show("list", (await graph.list(limit=2)).to_json())
        resolved = await graph.resolve(ids=["acme::route.validation"], relations={"depth": 2})
        show("resolve", resolved.to_json())
        matched = await graph.match(request="validate the request body before my handler")
        show("match", matched.to_json())
        document = await graph.read_document(
            capability_id="acme::route.validation", document_id="guide"
        )
        show("read_document", document.to_json())
        try:
            await graph.read_document(
                capability_id="acme::route.validation", document_id="upstream"
            )
        except GraphError as error:
            show("read_document url", error.to_json())
    empty = await CapabilityGraph.open(
        {
            "providers": [
                {
                    "definition": {
                        "providerId": "acme",
                        "name": "Error example",
                        "version": "1",
                        "capabilities": [],
                    }
                }
            ]
        }
    )
    try:
        await empty.resolve(ids=["acme::missing"])
    except GraphError as error:
        show("reference error", error.to_json())
        if error.to_json() != REFERENCE_ERROR:
            return 1
    finally:
        await empty.close()
    return 0 if matched.status == "matched" and resolved.status == "ok" else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
