"""Keeping flows: the store, data sets, schedules and their runs, export as a Playwright script."""
