"""Keeping flows: the store, schedules and their runs, export as a Playwright script."""
