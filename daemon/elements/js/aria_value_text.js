// What an ARIA slider or spinbutton says its value is.
(el) => el.getAttribute('aria-valuetext') ?? el.getAttribute('aria-valuenow')
