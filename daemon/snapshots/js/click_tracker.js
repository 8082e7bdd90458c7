// Runs in every document before its scripts: remembers elements that get a click listener, since a
// listener is invisible to the accessibility tree and to CSS.
(() => {
  if (window.__browserdClickables) return;
  const marked = new WeakSet();
  Object.defineProperty(window, '__browserdClickables', { value: marked });
  const add = EventTarget.prototype.addEventListener;
  EventTarget.prototype.addEventListener = function (type, listener, options) {
    if ((type === 'click' || type === 'mousedown' || type === 'pointerdown') && this instanceof Element) {
      marked.add(this);
    }
    return add.call(this, type, listener, options);
  };
})();
