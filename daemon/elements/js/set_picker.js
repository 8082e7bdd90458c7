// The picker's own setter when there is one (flatpickr keeps its instance on the input, or with altInput
// on the hidden input just before the one people see; jQuery UI and bootstrap-datepicker answer
// .datepicker('setDate')); else what a picker's code does when a day is picked: the value, then input and
// change. Answers [the setter used or null, the value the field shows].
(el, [value, parts]) => {
  const date = parts && new Date(parts[0], parts[1] - 1, parts[2], parts[3], parts[4]);
  const before = el.previousElementSibling;
  const flatpickr = el._flatpickr || (before && before.type === 'hidden' && before._flatpickr);
  if (date && flatpickr && typeof flatpickr.setDate === 'function') {
    flatpickr.setDate(date, true);
    return ['flatpickr', el.value];
  }
  const $ = window.jQuery;
  if (date && $ && $.fn && $.fn.datepicker && ($(el).hasClass('hasDatepicker') || $(el).data('datepicker'))) {
    $(el).datepicker('setDate', date);
    $(el).trigger('change');
    return ['datepicker', el.value];
  }
  Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set.call(el, value);
  el.dispatchEvent(new Event('input', { bubbles: true }));
  el.dispatchEvent(new Event('change', { bubbles: true }));
  return [null, el.value];
}
