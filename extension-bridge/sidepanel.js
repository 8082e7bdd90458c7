// The side panel: pairing, the daemon's sessions in this Chrome, and a log of what they did.

const $ = (id) => document.getElementById(id);
const ask = (message) => chrome.runtime.sendMessage(message);
const LOG_SHOWN = 100;
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
  renderSessions(state);
  // The sessions' tool calls (the daemon's log: tool, target, outcome, never a value) among this Chrome's events.
  const calls = (state.daemon.log || []).map((call) => ({
    at: call.at,
    sessionId: call.sessionId,
    action: `${call.tool}${call.target ? " " + call.target : ""}${call.outcome === "ok" ? "" : " → " + call.outcome}`,
    className: "call",
  }));
  const entries = [...state.log, ...calls].sort((a, b) => a.at - b.at).slice(-LOG_SHOWN);
  $("log").replaceChildren(
    ...entries.map((entry) => element("li", entry.className || "", `${new Date(entry.at).toLocaleTimeString()} ${entry.sessionId || ""} ${entry.action}`)),
  );
}

// The daemon's sessions and active runs, as `browserd status` lists them (the daemon sends that summary); under
// each session, its windows in this Chrome (tab groups: the extension's sessions, `<sessionId>-<suffix>`).
function renderSessions(state) {
  const { sessions, runs } = state.daemon;
  const ownerOf = (id) => sessions.find((session) => id.startsWith(`${session.sessionId}-`));
  const items = sessions.map((session) => {
    const item = element("li", "daemon-session", `${session.sessionId} · ${session.client} · ${session.trustLevel} · ${session.tabs.length} tab(s)`);
    item.dataset.sessionId = session.sessionId;
    item.dataset.trustLevel = session.trustLevel;
    const ownRuns = runs.runs.filter((run) => run.sessionId === session.sessionId);
    const windows = state.sessions.filter((window) => ownerOf(window.sessionId) === session);
    const last = session.lastCall;
    if (last) item.append(element("span", "last-call", ` · last: ${last.tool}${last.target ? " " + last.target : ""}`));
    // Revoke: the session's windows here end and it may open no other in this Chrome until allowed again.
    const revoked = state.revoked.includes(session.sessionId);
    const access = button(revoked ? "Allow" : "Revoke", () => ask({ type: revoked ? "allow" : "revoke", sessionId: session.sessionId }));
    access.className = revoked ? "allow" : "revoke";
    item.append(access);
    if (state.daemon.console) {
      // The same session in the daemon's console (it opens once `browserd console`'s link was opened in this Chrome).
      const open = element("a", "console-link", "Console");
      open.href = `${state.daemon.console}#/sessions/${session.sessionId}`;
      open.target = "_blank";
      item.append(open);
    }
    item.append(list("runs", ownRuns.map(runItem)), list("windows", windows.map(windowItem)));
    return item;
  });
  // Runs in no listed session, and windows whose session the daemon has not named yet (the summary lags).
  const loose = runs.runs.filter((run) => !sessions.some((session) => session.sessionId === run.sessionId));
  items.push(...loose.map(runItem), ...state.sessions.filter((window) => !ownerOf(window.sessionId)).map(windowItem));
  $("sessions").replaceChildren(...(items.length ? items : [element("li", "", "No session")]));
  $("runs-count").textContent = `runs: ${runs.active} active (${runs.queued} queued)`;
}

function runItem(run) {
  const item = element("li", "run", `${run.runId} · ${run.templateId} · ${run.status} · ${run.doneSteps}/${run.totalSteps} steps`);
  item.dataset.runId = run.runId;
  return item;
}

// A window of a session in this Chrome: its tab group, with the user's share and stop buttons.
function windowItem(session) {
  const item = element("li", "session", "");
  item.dataset.sessionId = session.sessionId;
  const label = element("span", "", `${session.client} · ${session.tabs.length} tab(s)${session.lastAction ? " · " + session.lastAction : ""}`);
  const share = button("Share this tab", async () => {
    const { id: windowId } = await chrome.windows.getCurrent(); // the panel's window: its tab in front
    return ask({ type: "share", sessionId: session.sessionId, windowId });
  });
  share.className = "share";
  const stop = button("Stop", () => ask({ type: "stop", sessionId: session.sessionId }));
  stop.className = "stop";
  item.append(label, share, stop);
  return item;
}

function element(tag, className, text) {
  const made = document.createElement(tag);
  if (className) made.className = className;
  made.textContent = text;
  return made;
}

function list(className, items) {
  const made = element("ul", className, "");
  made.append(...items);
  return made;
}

function button(text, action) {
  const made = element("button", "", text);
  made.addEventListener("click", async () => render(await action().then(() => ask({ type: "state" }))));
  return made;
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
