"""``python -m skillshelf.cli``: the ``skillshelf`` command."""

from skillshelf.cli.app import main

main()
