"""Skills on disk: safe paths, the one file walker, discovery, the repository, archive and URL
sources, the index cache and the watcher."""
