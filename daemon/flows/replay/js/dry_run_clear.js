// Takes every dry-run outline away.
() => document.querySelectorAll('[data-browserd-dry-run]').forEach((n) => n.remove())
