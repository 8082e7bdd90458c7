// The side panel: pairing, the daemon's sessions in this Chrome, and a log of what they did.

const $ = (id) => document.getElementById(id);
const ask = (message) => chrome.runtime.sendMessage(message);
const LABELS = { connected: "Connected to browserd", connecting: "Connecting…", disconnected: "Not connected", unpaired: "Not paired", refused: "Refused" };

$("pair-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const code = $("code").value;
  $("code").value = ""; // the code is used once; it is not kept anywhere
  const result = await ask({ type: "pair", code });
  render(await ask({ type: "state" }), result.ok ? "" : result.error);
});

$("port-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  await ask({ type: "port", port: $("port").value });
  render(await ask({ type: "state" }));
});

function render(state, error = "") {
  $("status").textContent = LABELS[state.status] || state.status;
  $("status").dataset.status = state.status;
  $("detail").textContent = error || state.detail || "";
  $("pairing").hidden = state.status === "connected";
  const sessions = $("sessions");
  sessions.replaceChildren(
    ...state.sessions.map((session) => {
      const item = document.createElement("li");
      item.className = "session";
      item.dataset.sessionId = session.sessionId;
      const label = document.createElement("span");
      label.textContent = `${session.client} · ${session.tabs.length} tab(s)${session.lastAction ? " · " + session.lastAction : ""}`;
      const share = button("Share this tab", async () => {
        const { id: windowId } = await chrome.windows.getCurrent(); // the panel's window: its tab in front
        return ask({ type: "share", sessionId: session.sessionId, windowId });
      });
      share.className = "share";
      const stop = button("Stop", () => ask({ type: "stop", sessionId: session.sessionId }));
      stop.className = "stop";
      item.append(label, share, stop);
      return item;
    }),
  );
  if (!state.sessions.length) sessions.replaceChildren(Object.assign(document.createElement("li"), { textContent: "No session" }));
  $("log").replaceChildren(
    ...state.log.map((entry) => {
      const item = document.createElement("li");
      item.textContent = `${new Date(entry.at).toLocaleTimeString()} ${entry.sessionId || ""} ${entry.action}`;
      return item;
    }),
  );
}

function button(text, action) {
  const element = document.createElement("button");
  element.textContent = text;
  element.addEventListener("click", async () => render(await action().then(() => ask({ type: "state" }))));
  return element;
}

async function refresh() {
  try {
    render(await ask({ type: "state" }));
  } catch {
    // the service worker is starting again; the next tick finds it
  }
}

refresh();
setInterval(refresh, 500);
