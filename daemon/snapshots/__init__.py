"""Snapshots and refs: the ARIA snapshot a model reads, its refs turned back into elements, and settling."""
