// The element a person's click toggles the target's checkable through, or null.
(start) => whereToClick(start, findCheckable(start))
