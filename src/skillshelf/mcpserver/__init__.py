"""``skillshelf serve``: an MCP server for skills (needs the ``mcp`` extra).

* :class:`SkillServer` — the skills extension (SEP-2640), ``skill://`` resources, the
  model-facing tools, prompts for user-invocable skills, the catalog as instructions.
* :func:`serve` — runs it over stdio or streamable HTTP, with hot reload.
* :func:`run_server` — a whole server process in one call, as ``skillshelf serve`` runs it
  (the bind refusal, signals, workspaces, and the clean-up on every way out).
* :class:`Viewer` and :data:`Visibility` — the hook that hides skills from some clients.
"""

from __future__ import annotations

from skillshelf.mcpserver._process import run_server
from skillshelf.mcpserver.run import serve
from skillshelf.mcpserver.server import SkillServer
from skillshelf.mcpserver.shelf import Viewer, Visibility

__all__ = ["SkillServer", "Viewer", "Visibility", "run_server", "serve"]
