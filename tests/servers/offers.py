#!/usr/bin/env python3
"""A stdio MCP server for the tests of prompts, resources, templates and instructions
(standard library only).

    offers.py serve CAPTURE [METHOD]
                              serves a combined capture file ({"tools", "prompts", "resources",
                              "resourceTemplates", "instructions"}), read afresh on every
                              request so a test can change it between runs: the instructions in
                              the initialize result, each list two items a page ("nextCursor"),
                              capabilities announcing the lists the file has; METHOD (e.g.
                              prompts/list) is answered with a JSON-RPC error instead
    offers.py modern CAPTURE  the same under the stateless 2026-07-28 protocol: initialize is
                              "method not found", server/discover carries the capabilities and
                              the instructions, and every list needs the protocol version in
                              params._meta
    offers.py hang            announces prompts and resources, answers tools/list (one tool) and
                              never answers prompts/list, resources/list or resources/templates/list
    offers.py error           announces prompts and resources, answers tools/list; prompts/list
                              is a JSON-RPC error whose message holds terminal escapes,
                              resources/list a result whose "resources" is not an array, and
                              resources/templates/list "method not found"
"""

import json
import sys

PAGE = 2
TOOL = {
    "name": "get_time",
    "description": "Returns the current time.",
    "inputSchema": {"type": "object", "properties": {}},
}


def out(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def result(mid, res):
    out({"jsonrpc": "2.0", "id": mid, "result": res})


def error(mid, code, message):
    out({"jsonrpc": "2.0", "id": mid, "error": {"code": code, "message": message}})


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def paged(items, params):
    cursor = (params or {}).get("cursor")
    start = int(cursor.split(":")[1]) if cursor else 0
    page = {"items": items[start:start + PAGE]}
    if start + PAGE < len(items):
        page["nextCursor"] = "page:%d" % (start + PAGE)
    return page


def main():
    mode = sys.argv[1]
    capture = sys.argv[2] if mode in ("serve", "modern") else None
    failing = sys.argv[3] if mode == "serve" and len(sys.argv) > 3 else None
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        msg = json.loads(line)
        mid, method, params = msg.get("id"), msg.get("method"), msg.get("params")
        if mid is None:
            continue
        if mode == "modern":
            if method == "initialize":
                error(mid, -32601, "Method not found: initialize")
                continue
            meta = (params or {}).get("_meta", {})
            if meta.get("io.modelcontextprotocol/protocolVersion") != "2026-07-28":
                error(mid, -32602, "the protocol version belongs in params._meta")
                continue
            if method == "server/discover":
                method = "initialize"
        if method == "initialize":
            caps = {"tools": {}}
            res = {"protocolVersion": "2025-06-18", "serverInfo": {"name": "offers", "version": "1.0.0"}}
            if capture:
                doc = load(capture)
                if "prompts" in doc:
                    caps["prompts"] = {}
                if "resources" in doc or "resourceTemplates" in doc:
                    caps["resources"] = {}
                if "instructions" in doc:
                    res["instructions"] = doc["instructions"]
            else:
                caps["prompts"] = {}
                caps["resources"] = {}
            res["capabilities"] = caps
            if mode == "modern":
                res["supportedVersions"] = ["2026-07-28"]
                del res["protocolVersion"]
            result(mid, res)
        elif method == "tools/list":
            tools = load(capture).get("tools", []) if capture else [TOOL]
            page = paged(tools, params)
            page["tools"] = page.pop("items")
            result(mid, page)
        elif method in ("prompts/list", "resources/list", "resources/templates/list"):
            key = {"prompts/list": "prompts", "resources/list": "resources",
                   "resources/templates/list": "resourceTemplates"}[method]
            if mode == "hang":
                continue  # never answered
            if method == failing:
                error(mid, -32603, "internal error")
                continue
            if mode == "error":
                if key == "prompts":
                    error(mid, -32603, "prompt store down\x1b[2J\x1b]0;PWNED\x07")
                elif key == "resources":
                    result(mid, {"resources": "not a list"})
                else:
                    error(mid, -32601, "Method not found")
                continue
            page = paged(load(capture).get(key, []), params)
            page[key] = page.pop("items")
            result(mid, page)
        else:
            error(mid, -32601, "Method not found")


if __name__ == "__main__":
    main()
