// The CSS of an iframe element inside its own document, for a recorded target's frame path.
(el) => {
  if (el.id && !/\d{2,}/.test(el.id)) return '#' + CSS.escape(el.id);
  if (el.name) return `iframe[name="${el.name}"]`;
  return `${el.localName}:nth-of-type(${[...el.parentElement.children].filter((c) => c.localName === el.localName).indexOf(el) + 1})`;
}
