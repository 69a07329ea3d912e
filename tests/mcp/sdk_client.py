#!/usr/bin/env python3
"""The official MCP Python SDK (`mcp` from PyPI, a client nobody here wrote) against tavo's MCP server,
over stdio (`tavo mcp`) and streamable HTTP (`POST /mcp` on `tavo serve`): it lists every tool, calls
every one of them in a scenario that builds a card, a lorebook, a regex group, a preset, a persona
and a chat, reads every resource and one object of every template, and exercises dryRun,
expectedRevision and clientRequestId. Exit 0 with one summary line, or 1 naming what failed.

Usage: python3 tests/mcp/sdk_client.py [path/to/tavo]   (run from the repository root; .ci/run
installs the SDK into a virtual environment first)."""
import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

BIN = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "target/release/tavo")
TOKEN = "sdk-client-token-0123456789"


class Failed(Exception):
    pass


def payload(result):
    """A call's answer: structured content, else the JSON of its text."""
    if result.structured_content is not None:
        return result.structured_content
    text = result.content[0].text if result.content else "null"
    try:
        return json.loads(text)
    except ValueError:
        return text


async def ok(s, name, args, seen):
    seen.add(name)
    r = await s.call_tool(name, args)
    if r.is_error:
        raise Failed(f"{name} {json.dumps(args)[:120]} failed: {payload(r)}")
    return payload(r)


async def refused(s, name, args, code, seen):
    seen.add(name)
    r = await s.call_tool(name, args)
    got = payload(r)
    if not r.is_error or got.get("code") != code:
        raise Failed(f"{name} should fail with {code}, got {got}")
    return got


async def scenario(s, tag):
    """Calls every tool; returns (tool count, calls made)."""
    await s.initialize()
    tools = {t.name: t for t in (await s.list_tools()).tools}
    seen = set()
    status = await ok(s, "tavo_status", {}, seen)
    assert status["server"] == "tavo", status

    # Characters, with the three write-safety arguments.
    card = {"name": f"Ada {tag}", "description": "made by the SDK", "first_mes": "Hello, {{user}}.",
            "alternate_greetings": ["Hi again."], "tags": ["sdk"]}
    before = (await ok(s, "tavo_character_search", {"query": f"Ada {tag}", "match": "exact"}, seen))["total"]
    dry = await ok(s, "tavo_character_create", {**card, "dryRun": True}, seen)
    if not dry.get("dryRun") or (await ok(s, "tavo_character_search", {"query": f"Ada {tag}", "match": "exact"}, seen))["total"] != before:
        raise Failed("dryRun saved a character")
    first = await ok(s, "tavo_character_create", {**card, "clientRequestId": f"sdk-{tag}-1"}, seen)
    again = await ok(s, "tavo_character_create", {**card, "clientRequestId": f"sdk-{tag}-1"}, seen)
    if first != again or (await ok(s, "tavo_character_search", {"query": f"Ada {tag}", "match": "exact"}, seen))["total"] != 1:
        raise Failed("a retried clientRequestId wrote twice")
    cid = first["id"]
    got = await ok(s, "tavo_character_get", {"id": cid}, seen)
    assert got["data"]["first_mes"] == "Hello, {{user}}.", got
    rev = got["revision"]
    await ok(s, "tavo_character_update", {"id": cid, "scenario": "A lab.", "expectedRevision": rev}, seen)
    await refused(s, "tavo_character_update", {"id": cid, "scenario": "stale", "expectedRevision": rev}, "conflict", seen)
    imported = await ok(s, "tavo_character_import_card", {"card": {"spec": "chara_card_v2", "spec_version": "2.0", "data": {
        "name": f"Imp {tag}", "description": "d", "first_mes": "Yo", "character_book": {"entries": [
            {"keys": ["moon"], "content": "The moon is red.", "enabled": True, "insertion_order": 1}]}}}}, seen)
    imp_id = imported.get("characterId") or imported.get("id")

    # Lorebooks.
    book = (await ok(s, "tavo_lorebook_create", {"name": f"World {tag}"}, seen))["id"]
    await ok(s, "tavo_lorebook_entry_upsert", {"lorebookId": book, "entry": {"identifier": "moon", "name": "Moon", "content": "red", "strategy": "keyword", "keywords": ["moon"]}}, seen)
    await ok(s, "tavo_lorebook_entry_upsert", {"lorebookId": book, "entry": {"identifier": "sun", "name": "Sun", "content": "hot", "strategy": "constant"}}, seen)
    await ok(s, "tavo_lorebook_entry_delete", {"lorebookId": book, "identifier": "sun"}, seen)
    lb = await ok(s, "tavo_lorebook_get", {"id": book}, seen)
    assert [e["identifier"] for e in lb["entries"]] == ["moon"], lb
    await ok(s, "tavo_lorebook_update", {"id": book, "name": f"World {tag} 2", "expectedRevision": lb["revision"]}, seen)
    await ok(s, "tavo_lorebook_search", {"query": "world", "limit": 1}, seen)
    wi = await ok(s, "tavo_lorebook_import", {"data": {"entries": {"0": {"uid": 0, "key": ["x"], "content": "y", "comment": "c"}}}}, seen)
    await ok(s, "tavo_lorebook_delete", {"id": wi.get("lorebookId") or wi.get("id")}, seen)

    # Regex groups.
    rx = (await ok(s, "tavo_regex_create", {"name": f"Rx {tag}", "entries": []}, seen))["id"]
    await ok(s, "tavo_regex_entry_upsert", {"regexId": rx, "entry": {"identifier": "r1", "name": "stars", "findRegex": "/\\*(.+?)\\*/g", "replaceString": "<i>$1</i>"}}, seen)
    tested = await ok(s, "tavo_regex_test", {"findRegex": "/\\*(.+?)\\*/g", "replaceString": "<i>$1</i>", "input": "a *b* c"}, seen)
    assert tested["output"] == "a <i>b</i> c", tested
    await ok(s, "tavo_regex_get", {"id": rx}, seen)
    await ok(s, "tavo_regex_update", {"id": rx, "name": f"Rx {tag} 2"}, seen)
    await ok(s, "tavo_regex_search", {"query": "rx"}, seen)
    st = await ok(s, "tavo_regex_import", {"data": {"scriptName": "hl", "findRegex": "x", "replaceString": "y", "placement": [2]}}, seen)
    await ok(s, "tavo_regex_entry_delete", {"regexId": rx, "identifier": "r1"}, seen)
    await ok(s, "tavo_regex_delete", {"id": st.get("regexId") or st.get("id")}, seen)

    # Presets.
    pre = (await ok(s, "tavo_preset_create", {"name": f"Mini {tag}", "entries": [{"identifier": "style", "name": "style", "content": "Be brief."}]}, seen))["id"]
    await ok(s, "tavo_preset_entry_upsert", {"presetId": pre, "entry": {"identifier": "style", "content": "Be very brief."}}, seen)
    await ok(s, "tavo_preset_entry_delete", {"presetId": pre, "identifier": "style"}, seen)
    await ok(s, "tavo_preset_set_active", {"id": pre}, seen)
    got = await ok(s, "tavo_preset_get", {"id": pre}, seen)
    assert got["active"] is True, got
    await ok(s, "tavo_preset_update", {"id": pre, "name": f"Mini {tag} 2"}, seen)
    await ok(s, "tavo_preset_search", {"query": "mini"}, seen)
    stp = await ok(s, "tavo_preset_import", {"data": {"prompts": [{"identifier": "main", "name": "Main", "content": "Hi"}], "prompt_order": []}}, seen)
    await ok(s, "tavo_preset_delete", {"id": stp.get("presetId") or stp.get("id")}, seen)

    # Personas.
    per = (await ok(s, "tavo_persona_create", {"name": f"Me {tag}", "description": "a tester"}, seen))["id"]
    await ok(s, "tavo_persona_set_active", {"id": per}, seen)
    await ok(s, "tavo_persona_update", {"id": per, "description": "a careful tester"}, seen)
    await ok(s, "tavo_persona_get", {"id": per}, seen)
    await ok(s, "tavo_persona_search", {"query": "me"}, seen)

    # Chats and messages.
    chat = (await ok(s, "tavo_chat_create", {"characterIds": [cid], "lorebookIds": [book]}, seen))["id"]
    await ok(s, "tavo_current_chat_set", {"id": chat}, seen)
    cur = await ok(s, "tavo_current_chat_get", {}, seen)
    assert cur["id"] == chat, cur
    await ok(s, "tavo_chat_update", {"id": chat, "name": f"Lab {tag}", "presetId": pre}, seen)
    await ok(s, "tavo_message_append", {"chatId": chat, "message": {"role": "user", "content": "Hello there"}}, seen)
    found = await ok(s, "tavo_message_find", {"chatId": chat}, seen)
    count = await ok(s, "tavo_message_count", {"chatId": chat}, seen)
    assert count["count"] == 2, count
    last = await ok(s, "tavo_message_get", {"chatId": chat, "index": -1}, seen)
    await ok(s, "tavo_message_update", {"chatId": chat, "id": last["id"], "content": "Hello again"}, seen)
    await ok(s, "tavo_message_delete", {"chatId": chat, "index": 0}, seen)
    await ok(s, "tavo_memory_append", {"chatId": chat, "memories": ["likes tea"]}, seen)
    await ok(s, "tavo_memory_update", {"chatId": chat, "memory": {"enabled": True}}, seen)
    mem = await ok(s, "tavo_memory_get", {"chatId": chat}, seen)
    assert mem["memories"] == ["likes tea"], mem
    await ok(s, "tavo_input_set", {"chatId": chat, "text": "draft"}, seen)
    await ok(s, "tavo_input_append", {"chatId": chat, "text": " more"}, seen)
    await ok(s, "tavo_input_get", {"chatId": chat}, seen)
    await ok(s, "tavo_input_clear", {"chatId": chat}, seen)
    # Sending would start a reply (no connection here): the dry run shows what it would send.
    planned = await ok(s, "tavo_input_send", {"chatId": chat, "text": "sent by an agent", "dryRun": True}, seen)
    assert planned.get("dryRun") is True, planned
    copy = await ok(s, "tavo_chat_copy", {"id": chat}, seen)
    await ok(s, "tavo_chat_reset", {"id": copy["id"]}, seen)
    await ok(s, "tavo_chat_get", {"id": chat, "includeMessages": True}, seen)
    await ok(s, "tavo_chat_search", {"query": "lab"}, seen)
    await ok(s, "tavo_chat_delete", {"id": copy["id"]}, seen)

    # Plugins, the agent flow of tavo://docs/plugins: validate, package, install, configure, remove.
    files = {
        "manifest.json": {"id": "org.sdk.hello", "name": {"$t": "name"}, "version": "1.0.0", "specVersion": 2,
                          "entry": "entry.js",
                          "localization": {"defaultLocale": "en", "resources": {"en": "locales/en.json"}},
                          "contributes": {"inputActions": [{"id": "greet", "label": {"$t": "greet"}}],
                                          "settings": {"schema": [{"type": "switch", "key": "loud", "label": "Loud"}]}}},
        "entry.js": "tavo.plugin.onInputAction('greet', () => {});",
        "locales/en.json": {"name": "Hello", "greet": "Greet"},
    }
    bad = await ok(s, "tavo_plugin_validate_manifest", {"manifest": dict(files["manifest.json"], version="01.0")}, seen)
    assert bad["valid"] is False and bad["error"]["field"] == "version", bad
    good = await ok(s, "tavo_plugin_validate_manifest", {"files": files}, seen)
    assert good["valid"] is True, good
    pkg = await ok(s, "tavo_plugin_package", {"files": files}, seen)
    preview = await ok(s, "tavo_plugin_install", {"zipBase64": pkg["zipBase64"], "dryRun": True}, seen)
    assert preview.get("dryRun") is True or "diff" in preview, preview
    done = await ok(s, "tavo_plugin_install", {"zipBase64": pkg["zipBase64"], "fileName": "hello.tpg"}, seen)
    assert done["plugin"]["name"] == "Hello", done
    found = await ok(s, "tavo_plugin_search", {"query": "org.sdk", "match": "prefix"}, seen)
    assert found["total"] == 1, found
    await ok(s, "tavo_plugin_set_config", {"pluginId": "org.sdk.hello", "key": "loud", "value": True}, seen)
    got = await ok(s, "tavo_plugin_get", {"pluginId": "org.sdk.hello"}, seen)
    assert got["config"] == {"loud": True}, got
    await ok(s, "tavo_plugin_reset_config", {"pluginId": "org.sdk.hello"}, seen)
    await ok(s, "tavo_plugin_set_enabled", {"pluginId": "org.sdk.hello", "enabled": True}, seen)
    rt = await ok(s, "tavo_plugin_get_runtime_contributions", {"pluginId": "org.sdk.hello"}, seen)
    assert rt["plugins"][0]["inputActions"][0]["label"] == "Greet", rt
    await ok(s, "tavo_plugin_uninstall", {"pluginId": "org.sdk.hello"}, seen)

    # Resources: every one listed, and one object of every template.
    res = await s.list_resources()
    uris = [str(r.uri) for r in res.resources]
    for uri in uris:
        await s.read_resource(uri)
    templates = [t.uri_template for t in (await s.list_resource_templates()).resource_templates]
    ids = {"characters": cid, "lorebooks": book, "regexes": rx, "presets": pre, "personas": per, "chats": chat}
    for t in templates:
        seg = t.split("/")[2]
        await s.read_resource(t.replace("{id}", str(ids[seg])))

    # Clean up what this run made, through the delete tools.
    await ok(s, "tavo_chat_delete", {"id": chat}, seen)
    for kind, i in (("character", cid), ("character", imp_id), ("lorebook", book), ("regex", rx), ("preset", pre), ("persona", per)):
        if i:
            await ok(s, f"tavo_{kind}_delete", {"id": i}, seen)
    missing = sorted(set(tools) - seen)
    if missing:
        raise Failed(f"tools not exercised: {missing}")
    return len(tools), len(uris) + len(templates)


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def main():
    data = tempfile.mkdtemp(prefix="tavo-mcp-sdk-")
    env = dict(os.environ, TAVO_DATA_DIR=data, RUST_LOG="warn")
    out = []
    server = None
    try:
        async def over_stdio():
            params = StdioServerParameters(command=BIN, args=["mcp"], env=env)
            async with stdio_client(params) as (r, w):
                async with ClientSession(r, w) as s:
                    return await scenario(s, "stdio")
        tools, resources = asyncio.run(asyncio.wait_for(over_stdio(), 120))
        out.append(f"stdio: {tools} tools called, {resources} resources read")

        for key, value in (("mcp.enabled", "true"), ("mcp.token", TOKEN)):
            subprocess.run([BIN, "settings", "set", key, value], env=env, check=True, capture_output=True)
        port = free_port()
        server = subprocess.Popen([BIN, "serve", "--addr", f"127.0.0.1:{port}"], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        base = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                urllib.request.urlopen(base + "/api/health", timeout=1)
                break
            except OSError:
                time.sleep(0.1)

        async def over_http():
            client = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
            async with client, streamable_http_client(base + "/mcp", http_client=client) as streams:
                async with ClientSession(streams[0], streams[1]) as s:
                    return await scenario(s, "http")
        tools, resources = asyncio.run(asyncio.wait_for(over_http(), 120))
        out.append(f"http: {tools} tools called, {resources} resources read")
        print("mcp sdk client: " + "; ".join(out))
    except BaseException as e:  # noqa: BLE001 - report whatever the SDK raised, with its cause
        inner = e
        while isinstance(inner, BaseExceptionGroup) and inner.exceptions:
            inner = inner.exceptions[0]
        print(f"mcp sdk client FAILED after [{'; '.join(out)}]: {type(inner).__name__}: {inner}")
        sys.exit(1)
    finally:
        if server:
            server.kill()
        shutil.rmtree(data, ignore_errors=True)


main()
