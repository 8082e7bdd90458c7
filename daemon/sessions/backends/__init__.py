"""Session backends: where a window's browser context comes from (DESIGN.md §3 "backends", D-14)."""
