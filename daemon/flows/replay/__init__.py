"""Running a flow: its graph walked as a task run, each browser step on a verified element."""
