"""The reference for ``bench/mcp.py``: the smallest useful server written with the official SDK.

One tool, ``read_skill(skill)``, one resource template, ``skill://{skill}/SKILL.md``, and one
prompt, ``skill(skill)``, all returning the text of ``ROOT/<skill>/SKILL.md`` — the same file
``skill_load``, ``skill_read_file``, ``resources/read`` and ``prompts/get`` deliver from
``skillshelf serve``, without any of its checks (no discovery, validation, path containment,
session state, substitution or escaping).

Usage: ``python bench/minimal_mcp_server.py ROOT [--transport stdio|http]``; over HTTP it
listens on a free loopback port and prints ``minimal: serving on URL`` on stderr.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

HERE = Path(__file__).resolve().parent
# Run as a script, this folder comes first on sys.path, where bench/mcp.py would shadow the
# MCP SDK's ``mcp`` package.
sys.path[:] = [p for p in sys.path if Path(p or os.getcwd()).resolve() != HERE]


def build(root: Path) -> MCPServer[Any]:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("minimal")

    @server.tool()
    def read_skill(skill: str) -> str:
        """Return the SKILL.md of ``skill``."""
        return (root / skill / "SKILL.md").read_text(encoding="utf-8")

    @server.resource("skill://{skill}/SKILL.md", mime_type="text/markdown")
    def skill_md(skill: str) -> str:
        """A skill's SKILL.md."""
        return (root / skill / "SKILL.md").read_text(encoding="utf-8")

    @server.prompt()
    def skill(skill: str) -> str:
        """A skill's SKILL.md as a user message."""
        return (root / skill / "SKILL.md").read_text(encoding="utf-8")

    return server


def _serve_http(server: MCPServer[Any]) -> None:
    import uvicorn

    app = server.streamable_http_app()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    print(f"minimal: serving on http://127.0.0.1:{sock.getsockname()[1]}/mcp", file=sys.stderr)
    sys.stderr.flush()
    config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("root", type=Path)
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    args = parser.parse_args()
    server = build(args.root.resolve())
    if args.transport == "stdio":
        server.run("stdio")
    else:
        _serve_http(server)


if __name__ == "__main__":
    main()
