"""Runnable example applications built on agentstream; each is served from the repository root
with ``agentstream serve examples.<name>.app:agent --chat examples.<name>.app:chat --server
examples.<name>.app:server``."""
