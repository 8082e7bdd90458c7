"""Record and replay (reference/004, issue 14): flows recorded from a session's actions, replayed verified."""
