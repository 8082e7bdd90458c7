// A shop under a strict policy (served with Content-Security-Policy: script-src 'self', no eval, and
// Trusted Types required for script sinks): it builds its DOM with createElement and textContent only.
const list = document.getElementById("products");
const status = document.getElementById("status");
const extra = [{ id: 3, name: "Kettle" }, { id: 4, name: "Saucer" }];
let items = [];

function render() {
  const wanted = document.getElementById("filter").value.trim().toLowerCase();
  const shown = items.filter((item) => item.name.toLowerCase().includes(wanted));
  list.replaceChildren(...shown.map((item) => {
    const row = document.createElement("li");
    row.textContent = item.name;
    return row;
  }));
  status.textContent = `${shown.length} of ${items.length} products`;
}

fetch("/api/items")
  .then((answer) => answer.json())
  .then((body) => {
    items = body.items;
    list.removeAttribute("aria-busy");
    render();
  });
document.getElementById("filter").addEventListener("input", render);
document.getElementById("more").addEventListener("click", () => {
  items = items.concat(extra.filter((item) => !items.some((known) => known.id === item.id)));
  render();
});
