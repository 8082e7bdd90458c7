// Whether a widget's element takes typing (an autocomplete's input).
(el) => el.matches('input:not([type=hidden]):not([readonly]):not([disabled]), textarea')
