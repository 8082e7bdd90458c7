// An ARIA slider's or spinbutton's value now.
(el) => Number(el.getAttribute('aria-valuenow'))
