"""Tests of skillshelf.mcpserver and ``skillshelf serve``."""
