"""Tests of skillshelf.integrations: each framework driven by its own offline test model."""
