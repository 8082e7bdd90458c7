// Counts the messages other windows post this one as the action's continuation for `ms` (a child frame's action).
(ms) => { const s = window.__browserdSettle; if (s) s.messagesUntil = performance.now() + ms; }
