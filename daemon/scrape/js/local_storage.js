// The document's origin and its localStorage entries; null for an opaque origin or a refused storage.
() => {
  try { return location.origin === 'null' ? null : [location.origin, Object.entries(localStorage)]; }
  catch (e) { return null; }
}
