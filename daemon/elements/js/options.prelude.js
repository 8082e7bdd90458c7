// Helpers shared by the option programs of elements/choices.py: what is on screen, the popup a combobox
// names, an element's text.
const shown = (el) => {
  const box = el.getBoundingClientRect();
  return box.width > 0 && box.height > 0 && getComputedStyle(el).visibility !== 'hidden';
};
const text = (el) => (el.getAttribute('aria-label') || el.textContent || '').replace(/\s+/g, ' ').trim();
const popupOf = (start) => {
  const box = start.matches('[aria-controls], [aria-owns]') ? start
    : start.querySelector('[aria-controls], [aria-owns]');
  const id = box && (box.getAttribute('aria-controls') || box.getAttribute('aria-owns'));
  return (id && document.getElementById(id.split(' ')[0])) || document;
};
const optionsOf = (start) => [...popupOf(start).querySelectorAll('[role=option]')].filter(shown);
