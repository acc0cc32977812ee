"""Reports: token counting, the token report and the prompt-cache report."""
