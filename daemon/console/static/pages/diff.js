// A line diff (longest common subsequence) of two texts, drawn as removed / added / kept lines.
import { h } from '../dom.js';

const CONTEXT = 3;

export function lineDiff(before, after) {
  const a = before.split('\n'), b = after.split('\n');
  const n = a.length, m = b.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const out = [];
  let i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) { out.push([' ', a[i]]); i++; j++; }
    else if (j < m && (i === n || lcs[i][j + 1] >= lcs[i + 1][j])) { out.push(['+', b[j]]); j++; }
    else { out.push(['-', a[i]]); i++; }
  }
  return out;
}

// Changed lines with a few lines of context around them; long unchanged stretches fold to "…".
export function diffView(before, after) {
  const lines = lineDiff(before, after);
  const near = lines.map((_, index) => lines.slice(Math.max(0, index - CONTEXT), index + CONTEXT + 1)
    .some(([mark]) => mark !== ' '));
  const shown = [];
  lines.forEach(([mark, text], index) => {
    if (near[index]) shown.push(h('div', { class: mark === '+' ? 'add' : mark === '-' ? 'del' : '' }, `${mark} ${text}`));
    else if (near[index - 1] || index === 0) shown.push(h('div', { class: 'fold' }, '…'));
  });
  const changed = lines.some(([mark]) => mark !== ' ');
  return h('pre', { class: 'diff' }, changed ? shown : 'No differences.');
}
