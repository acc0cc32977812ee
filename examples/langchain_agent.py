"""A LangChain v1 agent with skills, against any OpenAI-compatible server.

    pip install 'skillshelf[langchain]'
    python examples/langchain_agent.py --model qwen2.5:7b --base-url http://127.0.0.1:11434/v1 \
        "Summarise scripts/sample.csv for me"

The skills come from examples/skills; skill state is kept per thread in a SQLite file, so
running again with the same --thread resumes that thread's loads. Add --workspace to let the
model run skill scripts in a bubblewrap sandbox (workspace_exec).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from langchain.agents import create_agent
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver

from skillshelf import Repository, Trace, WorkspaceManager, open_store
from skillshelf.integrations.langchain import SkillsMiddleware

SKILLS = Path(__file__).resolve().parent / "skills"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("message")
    parser.add_argument("--model", required=True)
    parser.add_argument("--base-url", default=None)
    parser.add_argument("--api-key-env", default="OPENAI_API_KEY")
    parser.add_argument("--thread", default="demo")
    parser.add_argument("--store", default="sqlite:///langchain-skills.db")
    parser.add_argument("--workspace", action="store_true")
    parser.add_argument("--trace", default=None)
    args = parser.parse_args()

    model = ChatOpenAI(
        model=args.model,
        base_url=args.base_url,
        api_key=os.environ.get(args.api_key_env, "unused"),  # local servers want none
    )
    skills = SkillsMiddleware(
        Repository([SKILLS]),
        store=open_store(args.store),
        workspace=WorkspaceManager() if args.workspace else None,
        trace=Trace(args.trace) if args.trace else None,
    )
    agent = create_agent(model, middleware=[skills], checkpointer=InMemorySaver())
    result = agent.invoke(
        {"messages": [{"role": "user", "content": args.message}]},
        {"configurable": {"thread_id": args.thread}},
    )
    print(result["messages"][-1].text)


if __name__ == "__main__":
    main()
