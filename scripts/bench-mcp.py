#!/usr/bin/env python3
"""tools/call latency through POST /mcp on a release `tavo serve`: a read (tavo_character_get)
and a write (tavo_character_update), N calls each on one keep-alive connection, p50 and p99.
A pass-through baseline in the same run (GET /api/health) shows the machine's HTTP floor.

Usage: python3 scripts/bench-mcp.py [target/release/tavo] [N]"""
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

BIN = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "target/release/tavo")
N = int(sys.argv[2]) if len(sys.argv) > 2 else 500
TOKEN = "bench-mcp-token-0123456789"


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))]


def main():
    data = tempfile.mkdtemp(prefix="tavo-bench-mcp-")
    env = dict(os.environ, TAVO_DATA_DIR=data, RUST_LOG="warn")
    for k, v in (("mcp.enabled", "true"), ("mcp.token", TOKEN)):
        subprocess.run([BIN, "settings", "set", k, v], env=env, check=True, capture_output=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = subprocess.Popen([BIN, "serve", "--addr", f"127.0.0.1:{port}"], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        srv.stdout.readline()
        conn = http.client.HTTPConnection("127.0.0.1", port)
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                   "Authorization": f"Bearer {TOKEN}", "MCP-Protocol-Version": "2025-06-18"}
        seq = [0]

        def rpc(method, params):
            seq[0] += 1
            body = json.dumps({"jsonrpc": "2.0", "id": seq[0], "method": method, "params": params})
            conn.request("POST", "/mcp", body, headers)
            r = conn.getresponse()
            out = json.loads(r.read())
            assert r.status == 200, out
            return out

        rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}})
        made = rpc("tools/call", {"name": "tavo_character_create", "arguments": {"name": "Bench", "description": "d", "first_mes": "hi"}})
        cid = made["result"]["structuredContent"]["id"]

        def timed(f):
            xs = []
            for i in range(N):
                t = time.perf_counter()
                f(i)
                xs.append((time.perf_counter() - t) * 1000)
            return xs

        def health(_):
            conn.request("GET", "/api/health")
            conn.getresponse().read()

        base = timed(health)
        read = timed(lambda i: rpc("tools/call", {"name": "tavo_character_get", "arguments": {"id": cid}}))
        write = timed(lambda i: rpc("tools/call", {"name": "tavo_character_update", "arguments": {"id": cid, "scenario": f"take {i}"}}))
        for label, xs in (("GET /api/health (floor)", base), ("tools/call tavo_character_get", read), ("tools/call tavo_character_update", write)):
            print(f"{label}: p50 {pct(xs, 0.5):.2f} ms, p99 {pct(xs, 0.99):.2f} ms (n={N})")
    finally:
        srv.kill()
        shutil.rmtree(data, ignore_errors=True)


main()
