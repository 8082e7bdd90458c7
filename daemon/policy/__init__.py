"""The URL policy of DESIGN.md §5 and D-33: which URLs a session may reach, and the proxy that enforces it."""
