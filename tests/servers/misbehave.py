#!/usr/bin/env python3
"""A deliberately misbehaving MCP server for the wire tests (standard library only).

stdio:  misbehave.py MODE [PIDFILE]
    Appends " <grandchild pid>" to PIDFILE when it makes a grandchild, then speaks newline-delimited
    JSON-RPC on stdin/stdout. Modes:
      ok              initialize (2025-06-18), 3 tools
      old             answers protocolVersion 2024-11-05
      paginate        3 pages of 4 tools (cursors "p2", "p3")
      hang_init       never answers initialize; ignores SIGTERM; has a grandchild `sleep`
      hang_list       answers initialize, never answers tools/list; ignores SIGTERM
      crash           answers initialize, writes to stderr and exits 3 on tools/list
      garbage         non-JSON lines on stdout, a ping request it waits on, notifications
      malformed       100 tools, one of them malformed (name a number, schema a string)
      endless_cursor  a fresh nextCursor on every page, forever
      repeat_cursor   the same nextCursor on every page
      huge            a 50 MB tools/list response on one line
      drip            the tools/list response one byte every 50 ms
      modern          2026-07-28: initialize is "method not found"; server/discover; _meta needed
      hostile_stderr  answers initialize; on tools/list writes a terminal title, a screen clear
                      and a fake "All checks passed" line to stderr, then exits 1
      ping_flood      never reads stdin; sends ping requests as fast as the pipe takes them
      big_pages       every tools/list page is one tool with an 8 MB description, and a nextCursor
      escape          answers like ok, after leaving two `sleep`s outside its process group: a
                      child in a session of its own (setsid), and an orphan (double fork + setsid)

http:   misbehave.py http MODE LOGFILE
    Serves on 127.0.0.1 (a free port), prints "PORT <n>" on stdout, appends one line per request
    to LOGFILE. Modes:
      ok          streamable HTTP, JSON answers, checks Mcp-Session-Id and MCP-Protocol-Version
      sse_answers streamable HTTP answering with SSE (ping request first, then the response)
      401         every request refused with WWW-Authenticate + resource_metadata
      404 / 500   every POST and GET answered with that status
      broken_sse  tools/list answered with an SSE stream cut off mid-event
      drip        tools/list answered with an SSE stream of keep-alive comments, forever
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time


def tool(name, desc="a tool"):
    return {
        "name": name,
        "description": desc,
        "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}},
        "annotations": {"readOnlyHint": True, "vendorExtra": {"keep": "me"}},
    }


def out(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def result(mid, res):
    out({"jsonrpc": "2.0", "id": mid, "result": res})


def init_result(version="2025-06-18"):
    return {
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": {"name": "misbehave", "version": "0.0.1"},
    }


def read_msgs():
    for line in sys.stdin:
        line = line.strip()
        if line:
            yield json.loads(line)


def stdio(mode, pidfile):
    pids = []
    if mode == "hang_init":
        pids.append(subprocess.Popen(["sleep", "300"]).pid)
    if mode in ("hang_init", "hang_list"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if mode == "escape":
        pids.append(subprocess.Popen(["sleep", "300"], start_new_session=True).pid)
        r, w = os.pipe()
        if os.fork() == 0:
            os.setsid()
            pid = os.fork()
            if pid == 0:
                os.execvp("sleep", ["sleep", "301"])
            os.write(w, str(pid).encode())
            os._exit(0)
        os.close(w)
        pids.append(int(os.read(r, 32)))
        os.wait()
    if pidfile and pids:
        with open(pidfile, "a") as f:
            f.write(" " + " ".join(map(str, pids)))
    if mode == "garbage":
        print("Starting misbehave server... (this line is not JSON)", flush=True)
        print("[1, 2, 3", flush=True)
    if mode == "ping_flood":
        ping = json.dumps({"jsonrpc": "2.0", "id": "flood", "method": "ping"}) + "\n"
        burst = ping * 1000
        while True:
            sys.stdout.write(burst)
            sys.stdout.flush()
    page_no = 0
    for msg in read_msgs():
        method, mid = msg.get("method"), msg.get("id")
        if mid is None:
            continue  # notifications/initialized
        if method == "initialize":
            if mode == "hang_init":
                time.sleep(300)
            elif mode == "modern":
                out({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "Method not found: initialize"}})
            else:
                result(mid, init_result("2024-11-05" if mode == "old" else "2025-06-18"))
            continue
        if method == "server/discover" and mode == "modern":
            meta = msg.get("params", {}).get("_meta", {})
            if meta.get("io.modelcontextprotocol/protocolVersion") != "2026-07-28":
                out({"jsonrpc": "2.0", "id": mid, "error": {"code": -32602, "message": "bad _meta"}})
                continue
            result(mid, {"resultType": "complete", "supportedVersions": ["2026-07-28"],
                         "capabilities": {"tools": {}}, "serverInfo": {"name": "modern", "version": "9"}})
            continue
        if method != "tools/list":
            out({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "Method not found"}})
            continue
        page_no += 1
        cursor = (msg.get("params") or {}).get("cursor")
        if mode == "hang_list":
            time.sleep(300)
        elif mode == "hostile_stderr":
            sys.stderr.write("\x1b]0;PWNED\x07\x1b[2J\x1b[H\rAll checks passed\n")
            sys.stderr.write("ok\x1b[1A\x1b[2K\u202eevil\x9b31m\n")
            sys.stderr.flush()
            os._exit(1)
        elif mode == "crash":
            sys.stderr.write("fatal: out of cheese at tools/list\n")
            sys.stderr.flush()
            os._exit(3)
        elif mode == "garbage":
            print("DEBUG: about to list tools", flush=True)
            out({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hi"}})
            out({"jsonrpc": "2.0", "id": "srv-ping", "method": "ping"})
            reply = next(read_msgs())
            if reply.get("id") != "srv-ping" or "result" not in reply:
                sys.stderr.write("ping not answered: %r\n" % reply)
                os._exit(4)
            print("\x00\x01 binary junk", flush=True)
            result(mid, {"tools": [tool("after_ping")]})
        elif mode == "malformed":
            tools = [tool("tool_%03d" % i) for i in range(100)]
            tools[42] = {"name": 42, "description": ["not", "a", "string"], "inputSchema": "nope"}
            result(mid, {"tools": tools})
        elif mode == "paginate":
            nxt = {None: "p2", "p2": "p3", "p3": None}[cursor]
            res = {"tools": [tool("page%s_%d" % (cursor or "p1", i)) for i in range(4)]}
            if nxt:
                res["nextCursor"] = nxt
            result(mid, res)
        elif mode == "endless_cursor":
            result(mid, {"tools": [tool("t%d" % page_no)], "nextCursor": "c%d" % page_no})
        elif mode == "big_pages":
            sys.stdout.write('{"jsonrpc":"2.0","id":%s,"result":{"nextCursor":"c%d","tools":[{"name":"big%d",'
                             '"inputSchema":{"type":"object"},"description":"' % (json.dumps(mid), page_no, page_no))
            sys.stdout.write("x" * (8 * 1000 * 1000))
            sys.stdout.write('"}]}}\n')
            sys.stdout.flush()
        elif mode == "repeat_cursor":
            result(mid, {"tools": [tool("t%d" % page_no)], "nextCursor": "again"})
        elif mode == "huge":
            # Built by hand: json.dumps of 50 MB takes seconds on a slow machine.
            sys.stdout.write('{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"huge",'
                             '"inputSchema":{"type":"object"},"description":"' % json.dumps(mid))
            sys.stdout.write("x" * (50 * 1000 * 1000))
            sys.stdout.write('"}]}}\n')
            sys.stdout.flush()
        elif mode == "drip":
            line = json.dumps({"jsonrpc": "2.0", "id": mid, "result": {"tools": [tool("slow")]}}) + "\n"
            for ch in line:
                sys.stdout.write(ch)
                sys.stdout.flush()
                time.sleep(0.05)
        elif mode == "modern":
            meta = (msg.get("params") or {}).get("_meta", {})
            if meta.get("io.modelcontextprotocol/protocolVersion") != "2026-07-28":
                out({"jsonrpc": "2.0", "id": mid, "error": {"code": -32602, "message": "missing _meta"}})
            else:
                result(mid, {"resultType": "complete", "tools": [tool("stateless_tool")]})
        else:
            result(mid, {"tools": [tool("alpha"), tool("beta"), tool("gamma")]})


def http(mode, logfile):
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    log_lock = threading.Lock()

    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def log(self, extra=""):
            with log_lock, open(logfile, "a") as f:
                f.write("%s %s session=%s version=%s auth=%s %s\n" % (
                    self.command, self.path, self.headers.get("Mcp-Session-Id"),
                    self.headers.get("MCP-Protocol-Version"),
                    "yes" if self.headers.get("Authorization") else "no", extra))

        def send(self, status, body=b"", ctype="application/json", headers=()):
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for k, v in headers:
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def refuse_or_fail(self):
            port = self.server.server_address[1]
            if self.path.startswith("/.well-known/oauth-protected-resource"):
                meta = {"resource": "http://127.0.0.1:%d/mcp" % port,
                        "authorization_servers": ["http://127.0.0.1:%d/auth" % port],
                        "scopes_supported": ["tools:read"]}
                self.send(200, json.dumps(meta).encode())
                return True
            if mode == "401":
                self.send(401, b'{"error":"unauthorized"}', headers=[(
                    "WWW-Authenticate",
                    'Bearer realm="mcp", resource_metadata="http://127.0.0.1:%d/.well-known/oauth-protected-resource/mcp"' % port)])
                return True
            if mode in ("404", "500"):
                self.send(int(mode), b"<html>nothing here for you</html>", "text/html")
                return True
            return False

        def do_GET(self):
            self.log()
            if not self.refuse_or_fail():
                self.send(405, b"")

        def do_DELETE(self):
            self.log()
            self.send(200, b"")

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            msg = json.loads(body or b"{}")
            self.log(msg.get("method") or ("response:%s" % msg.get("id")))
            if self.refuse_or_fail():
                return
            method, mid = msg.get("method"), msg.get("id")
            if mid is None or method is None:
                self.send(202, b"")
                return
            if method == "initialize":
                self.send(200, json.dumps({"jsonrpc": "2.0", "id": mid, "result": init_result()}).encode(),
                          headers=[("Mcp-Session-Id", "sess-123")])
                return
            if self.headers.get("Mcp-Session-Id") != "sess-123" or \
                    self.headers.get("MCP-Protocol-Version") != "2025-06-18":
                self.send(400, b'{"error":"missing session or version header"}')
                return
            resp = {"jsonrpc": "2.0", "id": mid, "result": {"tools": [tool("http_tool")]}}
            if mode == "ok":
                self.send(200, json.dumps(resp).encode())
            elif mode in ("sse_answers", "broken_sse", "drip"):
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()

                def chunk(data):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                    self.wfile.flush()

                if mode == "sse_answers":
                    chunk(b": hello\n\n")
                    chunk(b'data: {"jsonrpc":"2.0","id":"srv-1","method":"ping"}\n\n')
                    chunk(b'data: {"jsonrpc":"2.0","method":"notifications/message","params":{}}\n\n')
                    chunk(b"data: " + json.dumps(resp).encode() + b"\n\n")
                    self.wfile.write(b"0\r\n\r\n")
                elif mode == "broken_sse":
                    chunk(b'data: {"jsonrpc":"2.0","id":%d,"res' % mid)
                    self.wfile.flush()
                    self.connection.shutdown(2)  # cut mid-event, mid-chunked-body
                    self.close_connection = True
                else:
                    for _ in range(600):
                        chunk(b": still here\n\n")
                        time.sleep(0.1)
            else:
                self.send(500, b"unknown mode")

    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    srv.daemon_threads = True
    print("PORT %d" % srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    if sys.argv[1] == "http":
        http(sys.argv[2], sys.argv[3])
    else:
        stdio(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
