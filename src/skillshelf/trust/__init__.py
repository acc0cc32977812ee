"""Trust: the lockfile, the content scanner, and the gate that decides what may be served."""
