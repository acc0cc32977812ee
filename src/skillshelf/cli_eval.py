"""``skillshelf eval``: trigger evals through the real agent loop.

Registered on the ``skillshelf`` group by importing this module (see ``cli._COMMAND_MODULES``).
"""
