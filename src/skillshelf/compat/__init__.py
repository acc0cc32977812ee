"""Compatibility layers that reproduce other Agent Skills libraries on skillshelf's core."""
