"""``skillshelf tokens``: token report and prompt-cache report.

Registered on the ``skillshelf`` group by importing this module (see ``cli._COMMAND_MODULES``).
"""
