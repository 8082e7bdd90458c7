// The settle (settle_action.js) followed, in the same round trip, by `then` (a function of no arguments) on
// the settled page: its answer is appended to the settle's; a failing `then` answers null.
(settle, then) => (args) => settle(args).then((found) => {
  let after = null;
  try { after = then(); } catch (e) {}
  return [...found, after];
})
