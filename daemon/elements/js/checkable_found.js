// Whether the target is, or holds exactly one, checkable.
(start) => !!findCheckable(start)
