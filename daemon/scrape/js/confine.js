// In every frame of a scrape's page, before its scripts: no new windows (a scrape reads the page it opened)
// and no shared workers (a target of the browser's, which no page's interception sees; pages must cope
// without them, as in browsers that lack them).
(() => {
  delete window.SharedWorker;
  window.open = function open() { return null; };
  const elsewhere = (target) => !/^(_self|_parent|_top)?$/i.test(target || '');
  addEventListener('click', (event) => {
    const link = event.target instanceof Element ? event.target.closest('a[href], area[href]') : null;
    if (link && elsewhere(link.target)) event.preventDefault();
  }, true);
  addEventListener('submit', (event) => {
    const button = event.submitter;
    const target = (button && button.getAttribute('formtarget')) || event.target.target;
    if (elsewhere(target)) event.preventDefault();
  }, true);
  const anchorClick = HTMLAnchorElement.prototype.click;
  HTMLAnchorElement.prototype.click = function click() {
    if (!elsewhere(this.target)) anchorClick.call(this);
  };
  const submit = HTMLFormElement.prototype.submit;
  HTMLFormElement.prototype.submit = function () {
    if (!elsewhere(this.target)) submit.call(this);
  };
})();
