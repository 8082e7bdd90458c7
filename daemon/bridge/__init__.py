"""The daemon side of extension-bridge (DESIGN.md §3 "bridge/", D-45)."""
