// The extension's half of the browserd bridge: one WebSocket to the daemon on 127.0.0.1, many sessions.
//
// Each daemon session owns a set of tabs, kept in a tab group named after its client. Every command is
// re-checked against that set (and the group, where grouping works) before it runs; the debugger is
// attached only to session tabs; tabs open in the background and are never focused unless asked.

import { DEFAULT_PORT, PROTOCOL, codeBytes, fromHex, mac, randomNonce, transcript } from "./protocol.js";

const EXTENSION_ID = chrome.runtime.id;
const KEEPALIVE_MS = 20_000; // WebSocket traffic keeps an MV3 service worker alive
const LOG_SIZE = 200;

const state = {
  ws: null,
  status: "disconnected", // disconnected | connecting | connected | unpaired | refused
  detail: "",
  sessions: new Map(), // sessionId -> {client, tabs: Set<tabId>, groupId, lastAction, startedAt}
  log: [], // {at, sessionId, action} - names only, never parameters (no typed values)
  daemon: unknownDaemon(), // the daemon's sessions and runs, as `browserd status` shows them (its SUMMARY)
  retry: null,
  delay: 0,
  keepalive: null,
};

function unknownDaemon() {
  return { sessions: [], runs: { active: 0, queued: 0, runs: [] }, log: [], console: null };
}

// -- connection ------------------------------------------------------------------------------------

async function settings() {
  const stored = await chrome.storage.local.get(["bridgeKey", "bridgePort"]);
  return { key: stored.bridgeKey || null, port: stored.bridgePort || DEFAULT_PORT };
}

// Opens the connection and answers the challenge: with the stored key (HELLO) or with a pairing code (PAIR).
async function connect(code = null) {
  clearTimeout(state.retry);
  const { key, port } = await settings();
  if (!key && !code) {
    setStatus("unpaired", "Enter the code that `browserd bridge pair` prints.");
    return { ok: false, error: state.detail };
  }
  if (state.ws) state.ws.close();
  setStatus("connecting", "");
  return await new Promise((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`);
    state.ws = ws;
    let authenticated = false;
    ws.onmessage = async (event) => {
      const message = JSON.parse(event.data);
      if (!authenticated) {
        const outcome = await handshake(ws, message, key, code);
        if (outcome === "sent") return;
        authenticated = outcome === true;
        resolve(authenticated ? { ok: true } : { ok: false, error: state.detail });
        return;
      }
      await receive(ws, message);
    };
    ws.onclose = (event) => {
      if (state.ws !== ws) return;
      state.ws = null;
      clearInterval(state.keepalive);
      state.daemon = unknownDaemon(); // a daemon not connected has nothing to show
      endAllSessions();
      if (!authenticated) resolve({ ok: false, error: state.detail || `closed (${event.code})` });
      if (event.code === 4001 || event.code === 4002) {
        setStatus("refused", state.detail || event.reason);
        return; // a refusal is not retried: the user must pair again or update
      }
      setStatus("disconnected", event.reason || "");
      // Back soon after a daemon restart or a suspension (well within 2 s), then less often.
      state.delay = Math.min(state.delay * 2 || 250, 5000);
      state.retry = setTimeout(() => connect(), state.delay);
    };
  });
}

let pending = null; // {serverNonce, clientNonce, keyBytes, pairing}

async function handshake(ws, message, key, code) {
  if (message.type === "CHALLENGE") {
    if (message.protocol !== PROTOCOL) {
      setStatus("refused", `the daemon speaks bridge protocol ${message.protocol}, this extension ${PROTOCOL}`);
      ws.close();
      return false;
    }
    const clientNonce = randomNonce();
    const pairing = Boolean(code);
    const secret = pairing ? codeBytes(code) : fromHex(key);
    const proof = await mac(secret, transcript(pairing ? "pair" : "hello", EXTENSION_ID, message.nonce, clientNonce));
    pending = { serverNonce: message.nonce, clientNonce, secret, pairing };
    ws.send(JSON.stringify({ type: pairing ? "PAIR" : "HELLO", protocol: PROTOCOL, extensionId: EXTENSION_ID, clientNonce, proof }));
    return "sent";
  }
  if (message.type === "WELCOME" && pending) {
    const { serverNonce, clientNonce, secret, pairing } = pending;
    pending = null;
    let keyBytes = secret;
    if (pairing) {
      const derived = await mac(secret, transcript("key", EXTENSION_ID, serverNonce, clientNonce));
      keyBytes = fromHex(derived);
      await chrome.storage.local.set({ bridgeKey: derived });
    }
    // The daemon proves it holds the key too: a process squatting the port could not.
    const expected = await mac(keyBytes, transcript("server", EXTENSION_ID, serverNonce, clientNonce));
    if (expected !== message.serverProof) {
      setStatus("refused", "the process on the bridge port is not the paired browserd daemon");
      ws.close();
      return false;
    }
    setStatus("connected", "");
    state.delay = 0;
    state.keepalive = setInterval(() => ws.readyState === WebSocket.OPEN && ws.send('{"type":"PING"}'), KEEPALIVE_MS);
    return true;
  }
  if (message.type === "ERROR") {
    state.detail = `${message.error}. ${message.recoverHint || ""}`.trim();
    if (message.errorCode === "BRIDGE_AUTH_FAILED") await chrome.storage.local.remove("bridgeKey");
  }
  return false;
}

function setStatus(status, detail) {
  state.status = status;
  state.detail = detail;
}

function send(message) {
  if (state.ws && state.ws.readyState === WebSocket.OPEN) state.ws.send(JSON.stringify(message));
}

// -- requests from the daemon -----------------------------------------------------------------------

async function receive(ws, message) {
  if (message.type === "SUMMARY") {
    state.daemon = {
      sessions: message.sessions || [], runs: message.runs || unknownDaemon().runs, log: message.log || [],
      console: message.console || null, // the daemon's console page, when it serves HTTP
    };
    return;
  }
  if (message.type !== "REQUEST") return;
  const reply = { type: "RESPONSE", id: message.id };
  try {
    reply.result = await handle(message.action, message.params || {});
  } catch (error) {
    reply.error = { error: String(error.message || error), errorCode: error.code || "EXTENSION_ERROR", recoverHint: error.hint || "" };
  }
  if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(reply));
}

class Refusal extends Error {
  constructor(message, code, hint) {
    super(message);
    this.code = code;
    this.hint = hint;
  }
}

function sessionOf(sessionId) {
  const session = state.sessions.get(sessionId);
  if (!session) throw new Refusal(`no session ${sessionId} in the extension`, "SESSION_NOT_FOUND", "Open a new extension window.");
  return session;
}

// Before every command: the tab must be one of the session's, and still in its group.
async function sessionTab(session, tabId) {
  if (!session.tabs.has(tabId)) {
    throw new Refusal(`tab ${tabId} is not one of this session's tabs`, "TAB_NOT_IN_SESSION", "Use a tab this session opened or was given.");
  }
  let tab;
  try {
    tab = await chrome.tabs.get(tabId);
  } catch {
    forgetTab(session, tabId);
    throw new Refusal(`tab ${tabId} is closed`, "TAB_NOT_IN_SESSION", "List the tabs again.");
  }
  if (session.groupId !== null && tab.groupId !== session.groupId) {
    await leave(session, tabId, "left-group");
    throw new Refusal(`tab ${tabId} left the session's tab group`, "TAB_NOT_IN_SESSION", "The user took this tab back; use another.");
  }
  return tab;
}

function record(sessionId, action) {
  const session = state.sessions.get(sessionId);
  if (session) session.lastAction = action;
  state.log.push({ at: Date.now(), sessionId, action });
  if (state.log.length > LOG_SIZE) state.log.shift();
}

// Daemon sessions the user revoked in the side panel: their windows ended and no new one opens here. Kept in
// storage.session, so a suspended worker still refuses them, until the user allows them again or Chrome restarts.
async function revokedSessions() {
  return (await chrome.storage.session.get("revoked")).revoked || [];
}

async function setRevoked(daemonSessionId, revoked) {
  const others = (await revokedSessions()).filter((id) => id !== daemonSessionId);
  await chrome.storage.session.set({ revoked: revoked ? [...others, daemonSessionId] : others });
  if (!revoked) return;
  for (const sessionId of [...state.sessions.keys()]) {
    if (sessionId.startsWith(`${daemonSessionId}-`)) await endSession(sessionId, true);
  }
}

async function handle(action, params) {
  if (action === "session.start") {
    const owner = params.sessionId.slice(0, params.sessionId.lastIndexOf("-"));
    if ((await revokedSessions()).includes(owner)) {
      throw new Refusal("the user revoked this session's access to their Chrome", "REVOKED", "Use a window of the daemon's own browser (kind 'playwright'); the user can allow this session again in the side panel.");
    }
    state.sessions.set(params.sessionId, { client: params.client, tabs: new Set(), groupId: null, lastAction: "", startedAt: Date.now() });
    record(params.sessionId, "session started");
    const version = (navigator.userAgent.match(/Chrome\/([\d.]+)/) || [])[1] || "0";
    return { userAgent: navigator.userAgent, product: `Chrome/${version}` };
  }
  const session = sessionOf(params.sessionId);
  switch (action) {
    case "session.tabs":
      return [...session.tabs];
    case "session.detach":
      await endSession(params.sessionId, false);
      return {};
    case "tab.create": {
      record(params.sessionId, "open tab");
      const tab = await chrome.tabs.create({ url: params.url || "about:blank", active: false });
      session.tabs.add(tab.id);
      await group(session, tab.id);
      return { tabId: tab.id };
    }
    case "tab.attach": {
      await sessionTab(session, params.tabId);
      await chrome.debugger.attach({ tabId: params.tabId }, "1.3");
      await keepRendering(params.tabId);
      const { targetInfo } = await chrome.debugger.sendCommand({ tabId: params.tabId }, "Target.getTargetInfo");
      return { targetInfo };
    }
    case "tab.close":
      await sessionTab(session, params.tabId);
      record(params.sessionId, "close tab");
      // The session lets go first: the tab's closing is then none of the user's doing (no "left" reason).
      forgetTab(session, params.tabId);
      send({ type: "EVENT", sessionId: params.sessionId, kind: "detached", tabId: params.tabId, reason: "closed-by-session" });
      await chrome.tabs.remove(params.tabId);
      return {};
    case "cdp.send": {
      await sessionTab(session, params.tabId);
      // Not logged here: one tool call is many CDP commands; the panel's log is the daemon's log of tool calls.
      const target = params.child ? { tabId: params.tabId, sessionId: params.child } : { tabId: params.tabId };
      return (await chrome.debugger.sendCommand(target, params.method, params.params)) || {};
    }
    default:
      throw new Refusal(`unknown action ${action}`, "NOT_SUPPORTED", "Update the extension and browserd together.");
  }
}

// Tabs on their way into the session's group: joining a group in another window moves the tab, which passes
// through "no group" - not the user taking it out.
const grouping = new Set();

// A background tab produces no frames: screenshots wait forever and animation-frame waits stall. A screencast
// counts as someone watching, so Chrome keeps rendering the tab - without focusing or raising it. Its frames
// are tiny, and never acknowledged, so Chrome sends just one.
const SCREENCAST = { format: "jpeg", quality: 1, maxWidth: 16, maxHeight: 16, everyNthFrame: 1000 };

async function keepRendering(tabId) {
  await chrome.debugger.sendCommand({ tabId }, "Page.enable");
  await chrome.debugger.sendCommand({ tabId }, "Page.startScreencast", SCREENCAST);
}

async function group(session, tabId) {
  grouping.add(tabId);
  try {
    if (session.groupId !== null) {
      try {
        await chrome.tabs.group({ groupId: session.groupId, tabIds: [tabId] });
        return;
      } catch {
        session.groupId = null; // the group went with its last tab (closed, or dragged out): a new one
      }
    }
    session.groupId = await chrome.tabs.group({ tabIds: [tabId] });
    await chrome.tabGroups.update(session.groupId, { title: session.client, collapsed: false });
  } catch (error) {
    // Some windows cannot hold groups (a headless one): the session's own tab set still bounds it.
    record(null, `no tab group: ${error.message}`);
  } finally {
    grouping.delete(tabId);
  }
}

function sessionOfTab(tabId) {
  for (const [sessionId, session] of state.sessions) if (session.tabs.has(tabId)) return [sessionId, session];
  return [null, null];
}

function forgetTab(session, tabId) {
  session.tabs.delete(tabId);
}

// A tab leaves the session (dragged out of its group, or the session ends): the debugger leaves it too.
// The daemon hears why before any command on the tab fails, so that it can tell its caller.
async function leave(session, tabId, reason) {
  const [sessionId] = sessionOfTab(tabId);
  forgetTab(session, tabId);
  record(sessionId, `tab ${tabId} left the session (${reason})`);
  if (sessionId) send({ type: "EVENT", sessionId, kind: "detached", tabId, reason });
  try {
    await chrome.debugger.detach({ tabId });
  } catch {
    // not attached, or already gone
  }
}

// The user stops a session (side panel), or the daemon lets it go: its tabs leave the debugger.
async function endSession(sessionId, tellDaemon) {
  const session = state.sessions.get(sessionId);
  if (!session) return;
  for (const tabId of [...session.tabs]) await leave(session, tabId, "stopped");
  state.sessions.delete(sessionId);
  record(sessionId, "session ended");
  if (tellDaemon) send({ type: "SESSION_END", sessionId });
}

function endAllSessions() {
  for (const sessionId of [...state.sessions.keys()]) endSession(sessionId, false);
}

// -- browser events -----------------------------------------------------------------------------------

chrome.debugger.onEvent.addListener((source, method, params) => {
  if (method === "Page.screencastFrame") return; // keepRendering's own, not the daemon's
  const [sessionId] = sessionOfTab(source.tabId);
  if (sessionId) send({ type: "EVENT", sessionId, tabId: source.tabId, child: source.sessionId || null, method, params: params || {} });
});

function gone(tabId, reason) {
  const [sessionId, session] = sessionOfTab(tabId);
  if (session) {
    forgetTab(session, tabId);
    send({ type: "EVENT", sessionId, kind: "detached", tabId, reason });
  }
}

// "canceled_by_user": the user closed Chrome's debugging bar; "target_closed": the tab went.
chrome.debugger.onDetach.addListener((source, why) => gone(source.tabId, why === "canceled_by_user" ? "debugger" : "closed"));

chrome.tabs.onRemoved.addListener((tabId) => gone(tabId, "closed"));

chrome.tabs.onUpdated.addListener((tabId, change) => {
  if (change.groupId === undefined || grouping.has(tabId)) return;
  const [, session] = sessionOfTab(tabId);
  if (session && session.groupId !== null && change.groupId !== session.groupId) leave(session, tabId, "left-group");
});

// -- the side panel -----------------------------------------------------------------------------------

chrome.runtime.onMessage.addListener((message, _sender, reply) => {
  (async () => {
    if (message.type === "state") return snapshot();
    if (message.type === "pair") return await connect(message.code);
    if (message.type === "port") {
      await chrome.storage.local.set({ bridgePort: Number(message.port) });
      return await connect();
    }
    if (message.type === "stop") {
      await endSession(message.sessionId, true);
      return snapshot();
    }
    if (message.type === "revoke" || message.type === "allow") {
      await setRevoked(message.sessionId, message.type === "revoke");
      return snapshot();
    }
    if (message.type === "share") return await share(message.sessionId, message.windowId);
    return { ok: false, error: `unknown message ${message.type}` };
  })().then(reply, (error) => reply({ ok: false, error: String(error.message || error) }));
  return true; // the reply comes later
});

// The user gives the tab in front of them (the active one of the side panel's window) to a session.
async function share(sessionId, windowId) {
  const session = sessionOf(sessionId);
  const [tab] = await chrome.tabs.query(windowId ? { active: true, windowId } : { active: true, lastFocusedWindow: true });
  if (!tab || tab.url?.startsWith(`chrome-extension://${EXTENSION_ID}/`)) return { ok: false, error: "no tab in front to share" };
  const [owner] = sessionOfTab(tab.id);
  if (owner) return { ok: false, error: owner === sessionId ? "this tab is the session's already" : "this tab belongs to another session" };
  await join(sessionId, session, tab.id, "tab shared by the user");
  return { ok: true, tabId: tab.id };
}

// A tab joins a session after the fact (shared by the user, or opened by one of the session's pages): it goes
// into the session's group, and the daemon attaches to it like to a tab the session opened.
async function join(sessionId, session, tabId, why) {
  session.tabs.add(tabId);
  await group(session, tabId);
  record(sessionId, why);
  send({ type: "EVENT", sessionId, kind: "joined", tabId });
}

// A link with target=_blank, a middle click or window.open in a session's page: the new tab is the session's
// too. webNavigation names the page that opened it; a tab's openerTabId does not (Chrome sets it to the
// tab that was active, which a session's background tab is not, and which may be the user's).
chrome.webNavigation.onCreatedNavigationTarget.addListener(({ sourceTabId, tabId }) => {
  const [sessionId, session] = sessionOfTab(sourceTabId);
  if (session && !session.tabs.has(tabId)) join(sessionId, session, tabId, "tab opened by a session page");
});

async function snapshot() {
  return {
    ok: true,
    extensionId: EXTENSION_ID,
    status: state.status,
    detail: state.detail,
    sessions: [...state.sessions].map(([sessionId, s]) => ({
      sessionId,
      client: s.client,
      tabs: [...s.tabs],
      lastAction: s.lastAction,
      startedAt: s.startedAt,
    })),
    log: state.log.slice(-50),
    daemon: state.daemon,
    revoked: await revokedSessions(),
  };
}

chrome.sidePanel?.setPanelBehavior?.({ openPanelOnActionClick: true }).catch(() => {});

// Chrome stops an idle (or misbehaving) MV3 service worker, and nothing but an event starts it again: an
// alarm is that event. Each start runs this file, which reconnects with the stored key (no new pairing).
// Unpacked, an alarm may fire every second; a packed extension's alarms are held to 30 s by Chrome.
const WAKE_ALARM = "browserd-wake";
const WAKE_EVERY_MIN = 1 / 60;

chrome.alarms.onAlarm.addListener((alarm) => {
  if (alarm.name === WAKE_ALARM && !state.ws && state.status === "disconnected") connect();
});
chrome.alarms.get(WAKE_ALARM).then((existing) => {
  if (!existing) chrome.alarms.create(WAKE_ALARM, { periodInMinutes: WAKE_EVERY_MIN });
});

// A service worker that starts (browser start, or back from suspension) reconnects with its stored key.
connect();
