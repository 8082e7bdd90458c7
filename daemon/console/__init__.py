"""The browserd console: a local web page over the daemon's services (issue 25, docs/console.md)."""
