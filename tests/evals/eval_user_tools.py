"""User tools an eval case names by module path (``eval_user_tools:list_files``)."""

from __future__ import annotations

from skillshelf.tools import Tool


def list_files(path: str) -> list[str]:
    """List the files under a folder."""
    return [f"{path}/a.txt", f"{path}/b.txt"]


def _weather(city: str, unit: str = "C") -> str:
    return f"20 {unit} in {city}"


WEATHER = [Tool.from_function(_weather, name="get_weather", description="Weather in a city.")]
