// How replay compares what an element shows now with what was recorded (issue 23 part 1), in the page.
//
// A person recognises a control whose name changed a little and refuses one that now says something else;
// these functions grade a name the same way, so the scorer in resolve.js can credit a close name and
// veto a different one without lowering its threshold:
//
// - same: the recorded name as it was;
// - normalized: the same letters and digits once case, punctuation and spacing are set aside
//   (`Sign up!`, `Sign-up`, `SIGN UP`, `Log in` / `Login`);
// - count: the same words once counts, prices, badges and plurals are set aside (`Archive (12)`,
//   `Place order · $71.00`, `Invite members`); digits count as words when the recorded name had any, so
//   `Step 5` is not `Step 6`;
// - contains: the recorded words in order with a few words added (`Save changes`, `Place your order`) or
//   dropped while at least half stay (`Apply filters` -> `Apply`), unless a word added or dropped changes
//   what the control does (`Save as draft`, `Sign in with Google` -> `Sign in`, `Delete all` -> `Delete`);
//   or the recorded name with a note after a dash or a dot (`M — only 2 left`);
// - number: the same words with other numbers, when the recorded name had a number (`Star 340` -> `Star 341`;
//   but also `Step 5` -> `Step 6`, which is why it is weak);
// - synonym: the same words once SYNONYMS' phrases are read as one (`Submit` / `Send`), or an icon glyph
//   that is the whole name read as the word it stands for (`×` / `Close`);
// - differs (a veto: never acted on), or empty (no name now: no credit).
//
// contains, number and synonym are weak: the scorer accepts them only when nothing else about the element disagrees
// and no other element still shows the recorded name (or, in the same container, a close one).

// Groups of names a person reads as the same action on a control. Small on purpose: a pair belongs here only
// when sites use the two for one action; opposites (Add/Remove, Sign in/Sign out) never share a group.
const SYNONYM_GROUPS = [
  ['submit', 'send'],
  ['sign up', 'signup', 'register', 'create account', 'create an account', 'join', 'get started'],
  ['log in', 'login', 'sign in', 'signin'],
  ['log out', 'logout', 'sign out', 'signout'],
  ['delete', 'remove', 'trash'],
  ['edit', 'modify', 'change'],
  ['search', 'find'],
  ['next', 'continue'],
  ['back', 'previous', 'prev'],
  ['close', 'dismiss'],
  ['ok', 'okay'],
  ['add to cart', 'add to bag', 'add to basket'],
  ['checkout', 'check out', 'proceed to checkout'],
  ['buy now', 'buy', 'purchase'],
  ['settings', 'preferences'],
  ['compose', 'new message', 'write'],
  ['reply', 'respond'],
  ['quantity', 'qty'],
  ['create', 'add', 'new'],
  ['information', 'info'],
  ['forgot password', 'reset password'],
];
// Added words that make another action of the recorded one: `Save as draft`, `Delete all`, `Sign in with Google`.
const CHANGERS = new Set([
  'with', 'without', 'via', 'using', 'as', 'all', 'selected', 'every', 'other', 'another', 'not', 'no',
  'never', 'don', 'later', 'draft', 'copy', 'instead', 'except', 'only', 'un',
]);
const plain = (s) => (s || '').toLowerCase().normalize('NFKD').replace(/[\u0300-\u036f]/g, '');
const squash = (s) => plain(s).replace(/[^\p{L}\p{N}]+/gu, '');
// The words of a name; counts in brackets always set aside, other numbers (prices, badges) unless kept.
const COUNTED = /[$€£¥]?\d[\d.,:]*\+?(\s+(new|unread|items?|messages?|results?|notifications?)\b)?/g;
const WORDS = new Map();
const words = (s, keepDigits) => {
  const key = (keepDigits ? '1' : '0') + (s || '');
  if (!WORDS.has(key)) WORDS.set(key, nameWords(s, keepDigits));
  return WORDS.get(key);
};
const nameWords = (s, keepDigits) => {
  let t = plain(s).replace(/[([]\s*[$€£¥]?\d[\d.,]*\+?(\s+\p{L}+)?\s*[)\]]/gu, ' ');
  if (!keepDigits) t = t.replace(COUNTED, ' ');
  const stem = (w) => (w.length > 3 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w);
  return (t.match(/[\p{L}\p{N}]+/gu) || []).map(stem);
};
// Each phrase under its first word, longest first, so a name is only tried against phrases it could hold.
const PHRASES = new Map();
for (const [p, key] of SYNONYM_GROUPS.flatMap((group, i) => group.map((phrase) => [words(phrase, true).join(' '), '#' + i]))
  .sort((a, b) => b[0].length - a[0].length)) {
  const first = p.split(' ')[0];
  if (!PHRASES.has(first)) PHRASES.set(first, []);
  PHRASES.get(first).push([new RegExp(`(?<=^| )${p}(?= |$)`, 'g'), key]);
}
const canonical = (ws) => {
  let t = ws.join(' ');
  for (const w of new Set(ws)) for (const [re, key] of PHRASES.get(w) || []) t = t.replace(re, key);
  return t;
};
// The shorter name's words in order inside the longer one, at most three words more, and none of the words
// one has beyond the other a word that changes the action.
// A linking word (`as`, `with`) changes the action only with a word of its own after it (`Save as draft`), not
// between two words that were there (`Export CSV` -> `Export as CSV`).
const LINKING = new Set(['as', 'with', 'via', 'using']);
const within = (short, long) => {
  if (long.length > short.length + 3) return false;
  let i = 0, changes = false; const extra = [];
  for (const [at, w] of long.entries()) {
    if (i < short.length && w === short[i]) { i++; continue; }
    extra.push(w);
    const linking = LINKING.has(w) && i > 0 && i < short.length && long[at + 1] === short[i];
    if (CHANGERS.has(w) && !linking) changes = true;
  }
  return i === short.length && extra.length > 0 && !changes;
};
// Words added (Save -> Save changes), or dropped while at least half stay (Apply filters -> Apply).
const contained = (a, b) => within(a, b) || (b.length * 2 >= a.length && within(b, a));
// An icon glyph that is a whole name, read as the word it stands for (`×` is Close): graded as a synonym.
const GLYPHS = {
  '×': 'close', '✕': 'close', '✖': 'close', '☰': 'menu', '🔍': 'search', '🔎': 'search', '⋯': 'more', '⋮': 'more',
  '🗑': 'delete', '✎': 'edit', '✏': 'edit', '⚙': 'settings', '›': 'next', '»': 'next', '→': 'next', '‹': 'back',
  '«': 'back', '←': 'back',
};
const glyphWords = (s) => { const g = GLYPHS[(s || '').replace(/[\s\uFE0F]+/g, '')]; return !squash(s) && g ? [g] : null; };
const STRONG_TIERS = new Set(['same', 'normalized', 'count']);
const NAME_CREDIT = { same: 1, normalized: 0.95, count: 0.9, contains: 0.75, number: 0.75, synonym: 0.6, differs: 0,
  empty: 0 };
const nameTier = (recorded, now) => {
  if (recorded === now) return 'same';
  if (!now) return 'empty';
  if (squash(recorded) && squash(recorded) === squash(now)) return 'normalized';
  const keep = /\d/.test(recorded);
  const a = words(recorded, keep), b = words(now, keep);
  const ga = glyphWords(recorded), gb = glyphWords(now);
  if (ga || gb) return (ga || a).length && (gb || b).length && canonical(ga || a) === canonical(gb || b) ? 'synonym' : 'differs';
  if (!a.length) return 'differs';
  if (a.join(' ') === b.join(' ')) return 'count';
  if (contained(a, b)) return 'contains';
  const bare = words(now, false).join(' ');
  if (keep && bare && words(recorded, false).join(' ') === bare) return 'number';
  if (b.length && canonical(a) === canonical(b)) return 'synonym';
  // A note after a dash or a dot annotates the name a person still reads first (`M — only 2 left`), unless it
  // holds a word that changes the action and no number (`Sign in — with Google`).
  const head = now.split(/\s[—–·•|-]\s/)[0], note = now.slice(head.length);
  if (head !== now && STRONG_TIERS.has(nameTier(recorded, head))
    && (/\d/.test(note) || !words(note, false).some((w) => CHANGERS.has(w)))) return 'contains';
  return 'differs';
};
// Where an element is (its container, heading, neighbours): the same words count, a few changed words
// (word overlap >= 0.8) count as much as they overlap, anything else not at all.
const near = (recorded, now) => {
  if (recorded === now) return 1;
  if (!now) return 0;
  if (squash(recorded) === squash(now)) return 0.95;
  const keep = /\d/.test(recorded);
  const a = words(recorded, keep), b = words(now, keep);
  if (!a.length) return 0;
  if (a.join(' ') === b.join(' ')) return 0.9;
  if (canonical(a) === canonical(b)) return 0.85;
  const left = new Map(); for (const w of a) left.set(w, (left.get(w) || 0) + 1);
  let both = 0; for (const w of b) { const k = left.get(w) || 0; if (k) { both++; left.set(w, k - 1); } }
  const overlap = (2 * both) / (a.length + b.length);
  return overlap >= 0.8 ? overlap : 0;
};
// A renamed id or test id that keeps a word of its own (archive-btn -> archive-button) half agrees.
const GENERIC_ID_WORDS = new Set(['btn', 'button', 'link', 'input', 'field', 'form', 'item', 'el', 'elem', 'element',
  'wrapper', 'container', 'cta', 'primary', 'main', 'js', 'test', 'qa', 'id']);
const idWords = (v) => v.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase().split(/[^a-z0-9]+/)
  .filter((w) => w.length > 1 && !/^\d+$/.test(w) && !GENERIC_ID_WORDS.has(w));
const idNear = (recorded, now) => {
  const kept = new Set(idWords(recorded));
  return idWords(now).some((w) => kept.has(w)) ? 0.5 : 0;
};
