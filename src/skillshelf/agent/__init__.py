"""The agent: the model ↔ tools loop, conversations, results, traces and history."""
