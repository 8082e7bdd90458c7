// One read: whether the target is a <select> (or its label), the hidden mirror of a widget, or neither:
// [own, hidden] or null.
(start) => {
  const select = nativeSelect(start);
  if (!select) return null;
  const own = select === start || select === start.control;
  return [own, hidden(select)];
}
