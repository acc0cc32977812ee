"""``python -m skillshelf``: the ``skillshelf`` command.

``python -m`` puts the working folder first on ``sys.path``, and an MCP client starts its
server in whatever folder it has open: a ``click.py`` or ``yaml.py`` in a cloned repository
would be imported in place of the real module. The folder is taken off the path before
anything else is imported (``import skillshelf`` itself imports no third-party module).
A ``skillshelf`` package in that folder would still shadow this one, so the configurations
docs/mcp.md gives run the console script, or ``python -P -m skillshelf`` (Python 3.11+).
"""

import os
import sys


def _drop_working_folder() -> None:
    if sys.flags.safe_path or not sys.path:  # -P / -I: the folder was never added
        return
    first = sys.path[0]
    if first == "" or os.path.abspath(first) == os.getcwd():
        del sys.path[0]


_drop_working_folder()

from skillshelf.cli import main  # noqa: E402  (after the path is made safe)

main()
