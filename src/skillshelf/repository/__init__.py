"""The repository: every skill under the roots, with precedence, the trust gate applied, refresh
and watching. It sits above ``trust`` (whose gate decides what may be served) and the on-disk
``skills`` edge."""

from skillshelf.repository._findings import Changes, Ignored, Shadowed, Skipped
from skillshelf.repository._roots import resolve_roots
from skillshelf.repository.repository import Repository

__all__ = ["Changes", "Ignored", "Repository", "Shadowed", "Skipped", "resolve_roots"]
