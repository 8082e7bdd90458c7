// Takes a replayed step's mark away once the step has acted (args: the elements still marked, the attribute):
// none when the page rendered the element anew or navigated, which is no error (resolution.py).
(elements, attribute) => elements.forEach((el) => el.removeAttribute(attribute))
