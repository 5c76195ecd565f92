#!/usr/bin/env python3
"""Capture an MCP server's raw tools/list over newline-delimited JSON-RPC on stdio.
usage: capture.py OUT.json [ENV=VAL ...] -- CMD ARGS..."""
import json, os, subprocess, sys, threading, time, queue

def main():
    out = sys.argv[1]
    i = sys.argv.index("--")
    env = dict(os.environ)
    for kv in sys.argv[2:i]:
        k, v = kv.split("=", 1); env[k] = v
    cmd = sys.argv[i + 1:]
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(out + ".stderr", "wb"), env=env, start_new_session=True)
    q = queue.Queue()
    def reader():
        for line in p.stdout:
            q.put(line)
        q.put(None)
    threading.Thread(target=reader, daemon=True).start()
    deadline = time.time() + 20
    def send(obj):
        p.stdin.write((json.dumps(obj) + "\n").encode()); p.stdin.flush()
    def wait_for(id_):
        while True:
            left = deadline - time.time()
            if left <= 0: raise TimeoutError("timeout waiting for id %s" % id_)
            line = q.get(timeout=left)
            if line is None: raise EOFError("server closed stdout")
            try: msg = json.loads(line)
            except ValueError:
                sys.stderr.write("non-JSON: %r\n" % line[:200]); continue
            if not isinstance(msg, dict): continue
            if msg.get("id") == id_ and ("result" in msg or "error" in msg):
                if "error" in msg: raise RuntimeError(json.dumps(msg["error"]))
                return msg["result"]
            # server requests (e.g. roots/list): answer with an error/empty result
            if "method" in msg and "id" in msg:
                if msg["method"] == "roots/list":
                    send({"jsonrpc": "2.0", "id": msg["id"], "result": {"roots": []}})
                else:
                    send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "not supported"}})
    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "heldout", "version": "0"}}})
        init = wait_for(1)
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools, cursor, n = [], None, 2
        while True:
            params = {"cursor": cursor} if cursor else {}
            res = wait_for_send = None
            send({"jsonrpc": "2.0", "id": n, "method": "tools/list", "params": params})
            res = wait_for(n); n += 1
            tools.extend(res.get("tools", []))
            cursor = res.get("nextCursor")
            if not cursor: break
        with open(out, "w", encoding="utf-8") as f:
            json.dump({"tools": tools}, f, indent=2, ensure_ascii=False); f.write("\n")
        print("%s: %d tools; server %s" % (out, len(tools), json.dumps(init.get("serverInfo"))))
    finally:
        try:
            os.killpg(p.pid, 9)
        except Exception: pass

if __name__ == "__main__":
    main()
