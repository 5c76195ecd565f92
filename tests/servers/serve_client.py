"""Drives `mcprisk serve` with the official MCP Python SDK (the `mcp` package pinned in
requirements.txt), for tests/serve_clients.rs.

    serve_client.py stdio  ERA MCPRISK_BINARY
    serve_client.py http   ERA URL

ERA is `handshake` (initialize, the 2025 protocols) or `discover` (server/discover and
per-request _meta, the stateless 2026-07-28 protocol). The script lists the tools, calls each
one, lists the resource templates and reads one resource of each, then prints one JSON object
with what came back. The SDK validates every structuredContent against the tool's outputSchema
and raises when it does not fit; any exception makes the exit status non-zero.
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

TOOLS = [
    {
        "name": "delete_everything",
        "description": "Deletes every file in the workspace permanently.",
        "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
    },
    {
        "name": "get_weather",
        "description": "Returns the weather forecast for a city.",
        "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
]


async def exercise(session: ClientSession, era: str) -> dict:
    if era == "handshake":
        init = await session.initialize()
        version = init.protocol_version
        server = init.server_info.name
    else:
        found = await session.discover()
        version = session.protocol_version
        server = session.server_info.name if session.server_info else None
    out = {"version": version, "server": server}
    listed = await session.list_tools()
    out["tools"] = {
        t.name: {
            "readOnlyHint": t.annotations.read_only_hint,
            "openWorldHint": t.annotations.open_world_hint,
            "has_output_schema": t.output_schema is not None,
        }
        for t in listed.tools
    }
    calls = {
        "lookup_server": {"name": "proxmox"},
        "lookup_tool": {"server": "proxmox", "tool": "pve_api_request"},
        "assess_tools": {"tools": TOOLS, "name": "sample"},
        "recommend_policy": {"tools": TOOLS, "name": "sample", "flavor": "policylayer"},
        "search_catalog": {"query": "postgres"},
        "explain_rule": {"id": "MR-C304"},
    }
    out["calls"] = {}
    for name, args in calls.items():
        r = await session.call_tool(name, args)
        out["calls"][name] = {
            "isError": r.is_error,
            "structured": r.structured_content,
            "text_is_json": json.loads(r.content[0].text) == r.structured_content,
        }
    missing = await session.call_tool("lookup_tool", {"server": "proxmox", "tool": "no_such_tool"})
    out["missing_tool"] = {"isError": missing.is_error, "text": missing.content[0].text}
    templates = await session.list_resource_templates()
    out["templates"] = [t.uri_template for t in templates.resource_templates]
    server_id = out["calls"]["lookup_server"]["structured"]["server"]["id"]
    out["resources"] = {}
    for uri in [f"mcprisk://servers/{server_id}", "mcprisk://rules/MR-C304"]:
        res = await session.read_resource(uri)
        out["resources"][uri] = json.loads(res.contents[0].text)
    return out


async def main() -> None:
    mode, era, target = sys.argv[1], sys.argv[2], sys.argv[3]
    if mode == "stdio":
        params = StdioServerParameters(command=target, args=["serve"])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                result = await exercise(session, era)
    else:
        async with streamable_http_client(target) as (read, write):
            async with ClientSession(read, write) as session:
                result = await exercise(session, era)
    print(json.dumps(result))


if __name__ == "__main__":
    asyncio.run(main())
