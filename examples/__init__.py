"""Runnable example applications: ``agentstream serve examples.<name>.app:agent --chat
examples.<name>.app:chat`` from the repository root."""
