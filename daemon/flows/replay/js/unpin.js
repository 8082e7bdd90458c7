// Takes a replayed step's mark away once the step has acted (acting.py).
(el, attribute) => el.removeAttribute(attribute)
