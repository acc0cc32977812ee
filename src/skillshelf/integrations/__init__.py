"""Skills inside the agent frameworks people already use, in each framework's own idiom.

One module per framework, each an optional extra imported lazily:

* :mod:`skillshelf.integrations.pydantic_ai` (``skillshelf[pydantic-ai]``),
* :mod:`skillshelf.integrations.openai_agents` (``skillshelf[openai-agents]``),
* :mod:`skillshelf.integrations.langchain` (``skillshelf[langchain]``).

Each brings the catalog (in the agent's instructions), the skill tools as native tools with
the same grading as :class:`skillshelf.tools.SkillTools`, per-conversation skill state in any
skillshelf store, tool activation on load, and the JSONL trace — through the framework's
public extension points only.
"""
