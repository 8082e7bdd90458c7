// Clears the tab's session storage (it belongs to the tab, not to the origin's storage that CDP clears) and
// answers how many entries it held; 0 where the page may not touch it (an opaque origin, a sandbox).
() => {
  try {
    const n = sessionStorage.length;
    sessionStorage.clear();
    return n;
  } catch (e) {
    return 0;
  }
}
