"""The ``skillshelf`` command line: one module per command group, one place for shared options.

The CLI only translates: library call in, exit code and message out (see ``_common``).
"""

from skillshelf.cli.app import main

__all__ = ["main"]
