"""An OpenAI Agents SDK agent with skillshelf's skills, against any OpenAI-compatible endpoint.

    pip install 'skillshelf[openai-agents]'
    python examples/openai_agents_agent.py --base-url http://127.0.0.1:11434/v1 \
        --model qwen3:8b "Summarise examples/skills/csv-insights/scripts/sample.csv"

The skill state and the SDK session both live in SQLite files, so running it again with the
same ``--session`` resumes the conversation with its loads. ``--exec`` adds ``workspace_exec``
(scripts run in bubblewrap where it works).
"""

from __future__ import annotations

import argparse
import asyncio
import os

from agents import Agent, OpenAIChatCompletionsModel, Runner, SQLiteSession, set_tracing_disabled
from openai import AsyncOpenAI

from skillshelf import Repository, Trace, WorkspaceManager, open_store
from skillshelf.integrations.openai_agents import skill_tools


async def main(args: argparse.Namespace) -> None:
    workspace = WorkspaceManager() if args.exec else None
    store, trace = open_store("sqlite:///skill-state.db"), Trace("trace.jsonl")
    kit = skill_tools(
        Repository([args.root]),
        store=store,
        instructions="You are a helpful assistant. Be brief.",
        workspace=workspace,
        trace=trace,
    )
    client = AsyncOpenAI(base_url=args.base_url, api_key=os.environ.get("OPENAI_API_KEY", "none"))
    agent = Agent(
        name="assistant",
        instructions=kit.instructions,
        tools=kit.tools,
        hooks=kit.hooks,
        model=OpenAIChatCompletionsModel(model=args.model, openai_client=client),
    )
    session = SQLiteSession(args.session, "history.db")
    try:
        result = await Runner.run(
            agent, args.message, session=session, context=kit.context(session)
        )
        print(result.final_output)
    finally:
        session.close()
        store.close()
        trace.close()
        await client.close()
        if workspace is not None:
            workspace.close_all()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("message")
    parser.add_argument("--base-url", required=True, help="An OpenAI-compatible /v1 endpoint.")
    parser.add_argument("--model", required=True)
    parser.add_argument("--root", default="examples/skills")
    parser.add_argument("--session", default="example")
    parser.add_argument("--exec", action="store_true", help="Offer workspace_exec.")
    # The SDK's own traces go to OpenAI's platform; a local endpoint has nowhere to send them.
    set_tracing_disabled(True)
    asyncio.run(main(parser.parse_args()))
