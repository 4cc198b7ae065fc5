"""The workflow assistant: a chat that explains, lists and builds automation rules of a small
workflow backend (SQLite behind its own REST API), over the workflow-assistant protocol
(``POST /v1/agent/chat``) and in the web UI."""
