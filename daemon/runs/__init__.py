"""Task runs: templates, the run manager, durable records and artifacts (reference/001, DESIGN.md §3 runs/)."""
