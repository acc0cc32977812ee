"""Running scripts: the runner (the only module that spawns processes) and workspaces."""
