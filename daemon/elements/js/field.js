// The element fill acts on (Playwright retargets a label to its control) and what it is.
(e) => {
  const el = e.tagName === 'LABEL' && e.control ? e.control : e;
  const tag = el.tagName.toLowerCase();
  const role = el.getAttribute('role');
  const aria = role === 'slider' || (role === 'spinbutton' && tag !== 'input');
  const kind = tag === 'input' ? el.type : tag === 'textarea' || tag === 'select' ? tag
    : el.isContentEditable ? 'contenteditable' : aria ? 'aria-' + role : tag;
  const disabled = el.matches(':disabled') || !!el.closest('[aria-disabled="true"]');
  const readonly = el.readOnly === true || el.getAttribute('aria-readonly') === 'true';
  // A read-only text input that a date or time picker fills (flatpickr, pikaday, jQuery UI datepicker).
  const picker = readonly && tag === 'input' && (el.hasAttribute('aria-haspopup')
    || /date|time|picker|calendar/i.test([el.className, el.id, el.name, el.placeholder].join(' ')));
  const bound = (name) => el.getAttribute(aria ? 'aria-value' + name : name) || '';
  return [kind, bound('min'), bound('max'), disabled, readonly, picker];
}
