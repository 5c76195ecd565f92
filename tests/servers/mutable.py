"""A stdio MCP server whose tool list a test changes between runs: every tools/list answers
with the JSON array in the file named by the first argument. Standard library only."""
import json
import sys


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def main():
    path = sys.argv[1]
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        msg = json.loads(line)
        mid = msg.get("id")
        method = msg.get("method")
        if mid is None:
            continue
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": mid, "result": {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "mutable", "version": "1.0.0"},
            }})
        elif method == "tools/list":
            with open(path, encoding="utf-8") as f:
                tools = json.load(f)
            send({"jsonrpc": "2.0", "id": mid, "result": {"tools": tools}})
        else:
            send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "method not found"}})


if __name__ == "__main__":
    main()
