"""The model-facing tools: their schemas and argument repair (``spec``), the skill
tools, user tools."""
