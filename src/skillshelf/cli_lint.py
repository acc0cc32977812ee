"""``skillshelf lint``: catalog and skill quality findings.

Registered on the ``skillshelf`` group by importing this module (see ``cli._COMMAND_MODULES``).
"""
