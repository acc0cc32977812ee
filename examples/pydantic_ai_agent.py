"""A pydantic-ai agent with skillshelf's skills, against any OpenAI-compatible server.

    pip install 'skillshelf[pydantic-ai,openai]'
    python examples/pydantic_ai_agent.py --base-url http://127.0.0.1:11434/v1 \
        --model qwen2.5:7b "Draft release notes for v1.4.0 from: feat: CSV export (#112)"

Each run of the same ``--conversation`` with ``--store sqlite:///chat.db`` keeps its loads.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from pathlib import Path

from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from skillshelf import Repository, Trace, open_store
from skillshelf.integrations.pydantic_ai import SkillsToolset

SKILLS = Path(__file__).resolve().parent / "skills"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prompt")
    parser.add_argument("--base-url", required=True, help="an OpenAI-compatible /v1 URL")
    parser.add_argument("--model", default="qwen2.5:7b")
    parser.add_argument("--api-key-env", default="OPENAI_API_KEY")
    parser.add_argument("--store", default=None, help="e.g. sqlite:///chat.db")
    parser.add_argument("--conversation", default="example")
    parser.add_argument("--trace", default=None, help="a JSONL file to append to")
    args = parser.parse_args()

    api_key = os.environ.get(args.api_key_env, "unused")
    model = OpenAIChatModel(args.model, provider=OpenAIProvider(args.base_url, api_key))
    trace = Trace(args.trace) if args.trace else None
    skills = SkillsToolset(Repository([SKILLS]), store=open_store(args.store), trace=trace)
    agent = Agent(model, toolsets=[skills])
    try:
        result = asyncio.run(agent.run(args.prompt, conversation_id=args.conversation))
    finally:
        if trace is not None:
            trace.close()
    print(result.output)


if __name__ == "__main__":
    main()
