// Marks the element a replayed step verified (args: [attribute, token]), so that a locator finds it alone
// while the step acts on it through the element helpers (acting.py).
(el, [attribute, token]) => el.setAttribute(attribute, token)
