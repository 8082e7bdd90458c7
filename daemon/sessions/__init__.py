"""The session model: a session, its windows and tabs, their backends and what each remembers."""
