// The report resolve.js left on the window, taken away.
() => { const out = window.__browserdResolved; delete window.__browserdResolved; return out; }
