// The bridge protocol shared by the service worker and the side panel (daemon/bridge/pairing.py is the
// daemon's half). Neither the pairing code nor the key is ever sent: both sides derive and prove them.

export const PROTOCOL = 1;
export const DEFAULT_PORT = 3026;

const encoder = new TextEncoder();

export function hex(buffer) {
  return [...new Uint8Array(buffer)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export function fromHex(text) {
  return new Uint8Array(text.match(/../g).map((pair) => parseInt(pair, 16)));
}

export function randomNonce() {
  return hex(crypto.getRandomValues(new Uint8Array(16)));
}

export function normaliseCode(code) {
  return code.replace(/[-\s]/g, "").toUpperCase();
}

export function transcript(purpose, extensionId, serverNonce, clientNonce) {
  return `browserd-bridge|${purpose}|${PROTOCOL}|${extensionId}|${serverNonce}|${clientNonce}`;
}

export async function mac(keyBytes, text) {
  const key = await crypto.subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return hex(await crypto.subtle.sign("HMAC", key, encoder.encode(text)));
}

export function codeBytes(code) {
  return encoder.encode(normaliseCode(code));
}
