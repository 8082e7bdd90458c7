// The names of the options on screen, the first 30.
(start) => optionsOf(start).map(text).slice(0, 30)
