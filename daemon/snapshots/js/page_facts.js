// What a snapshot reads of the page besides Playwright's ARIA snapshot, in one round trip: the annotations
// and the title, as JSON text. After an action it rides on the settle's own evaluate (tools/tabtool.py).
//
// Elements whose kind or state the ARIA snapshot does not show, with their rounded client boxes:
// [x, y, w, h, [attributes to add], selector, label, tag, actionable]. Selector, label and tag are set for
// elements that act on a click without a role; Playwright folds those into their parent's text when they
// are inline, so they get a ref of ours (c1, c2...) resolved through a CSS selector unique in the document.
// `actionable` (a click handler, draggable, focusable by tabindex) keeps the ref of a prose line that
// holds the element: lean() would otherwise hide it, and an agent drags, hovers or clicks such lines.
// `fieldState`: field_state.js, whose answer comes third (told whether the walk met a shadow root).
(fieldState) => () => {
  let shadows = false;  // whether the walk below met a shadow root: field_state.js needs to know
  const annotations = () => {
    const found = [];
    const clickables = window.__browserdClickables;
    const native = new Set(['A', 'BUTTON', 'INPUT', 'SELECT', 'TEXTAREA', 'SUMMARY', 'LABEL', 'OPTION', 'HTML', 'BODY',
                            'MAIN', 'FORM']);
    const isClickable = (e) => !native.has(e.tagName) && !e.hasAttribute('role')
      && !!(e.onclick || e.hasAttribute('onclick') || (clickables && clickables.has(e)));
    const selectorOf = (e) => {
      const parts = [];
      for (let node = e; node && node.nodeType === 1 && node.tagName !== 'HTML'; node = node.parentElement) {
        if (node.id && document.querySelectorAll('#' + CSS.escape(node.id)).length === 1) {
          parts.unshift('#' + CSS.escape(node.id));
          return parts.join(' > ');
        }
        let index = 1;
        for (let sibling = node.previousElementSibling; sibling; sibling = sibling.previousElementSibling) {
          if (sibling.tagName === node.tagName) index++;
        }
        parts.unshift(node.tagName.toLowerCase() + ':nth-of-type(' + index + ')');
      }
      return 'html > ' + parts.join(' > ');
    };
    const kindOf = (e) => {
      if (e.tagName === 'TEXTAREA') return 'multiline';
      // The attribute first: isContentEditable brings the page's style up to date, on every element.
      if (e.getAttribute('contenteditable') !== null && e.isContentEditable) return 'rich-text';
      if (e.tagName !== 'INPUT') return null;
      const t = (e.getAttribute('type') || 'text').toLowerCase();
      return ['text', 'checkbox', 'radio', 'button', 'submit', 'reset', 'image', 'hidden'].includes(t) ? null : t;
    };
    const visit = (root) => {
      for (const e of root.querySelectorAll('*')) {
        if (e.shadowRoot) {
          shadows = true;
          visit(e.shadowRoot);
        }
        const kind = kindOf(e);
        const formish = e.tagName === 'INPUT' || e.tagName === 'TEXTAREA' || e.tagName === 'SELECT';
        const flagged = formish && (e.readOnly || e.required);
        const collapsed = e.getAttribute('aria-expanded') === 'false'
          || (e.tagName === 'SUMMARY' && e.parentElement && e.parentElement.tagName === 'DETAILS'
              && !e.parentElement.open);
        // Selectors cannot reach into a shadow root from the document: only light-DOM clickables.
        const clickable = root === document && isClickable(e);
        const actionable = root === document && (clickable || e.getAttribute('draggable') === 'true'
          || (e.hasAttribute('tabindex') && e.tabIndex >= 0));
        if (!kind && !flagged && !collapsed && !actionable) continue;
        const r = e.getBoundingClientRect();
        if (!r.width && !r.height) continue;
        const extra = [];
        if (kind) extra.push('type=' + kind);
        if (formish && e.readOnly) extra.push('readonly');
        if (formish && e.required) extra.push('required');
        if (collapsed) extra.push('collapsed');
        const label = clickable ? (e.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 80) : null;
        found.push([Math.round(r.x), Math.round(r.y), Math.round(r.width), Math.round(r.height), extra,
                    clickable ? selectorOf(e) : null, label, e.tagName, actionable]);
      }
    };
    visit(document);
    return found;
  };
  // As JSON text: Playwright's wire format for a nested value costs the driver and the daemon's Python a
  // millisecond or more per call to build and check (1.4 ms against 0.3 of the daemon's CPU on form.html).
  const found = annotations();
  return JSON.stringify([found, document.title, fieldState(shadows)]);
}
