"""``python -m skillshelf``: the ``skillshelf`` command."""

from skillshelf.cli import main

main()
