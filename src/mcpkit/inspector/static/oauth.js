// OAuth in the page: a server that wants credentials offers a sign-in; the authorization URL the backend
// is waiting on is shown with a button that opens it (the redirect comes back to the backend's loopback).
import { act } from "./api.js";
import { clear, errorBox, h } from "./dom.js";

let panel = null;

function place(container, card) {
  if (panel) panel.remove();
  panel = card;
  container.prepend(card);
}

export function clearOAuth() {
  if (panel) { panel.remove(); panel = null; }
}

export function offerSignIn(container, connectBody) {
  const clientId = h("input", { type: "text", "aria-label": "client id", placeholder: "optional: a registered client id" });
  const secret = h("input", { type: "password", "aria-label": "client secret", placeholder: "optional: its secret" });
  const out = h("div", {});
  const card = h("form", { class: "ask oauth", onsubmit: async (e) => {
    e.preventDefault();
    clear(out, h("span", { class: "muted" }, "waiting for the sign-in…"));
    try {
      await act("connect", { ...connectBody(), auth: "oauth", clientId: clientId.value, clientSecret: secret.value });
      clearOAuth();
    } catch (err) { clear(out, errorBox(err)); }
  } },
  h("h3", {}, "This server wants credentials"),
  h("p", {}, "Sign in with OAuth: the server's authorization server opens in a new tab, and the tokens are kept for next time."),
  h("label", { class: "field" }, h("span", { class: "field-name" }, "client id"), clientId),
  h("label", { class: "field" }, h("span", { class: "field-name" }, "client secret"), secret),
  h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Sign in with OAuth"),
    h("button", { type: "button", onclick: clearOAuth }, "Not now")),
  out);
  place(container, card);
}

export function onAuthorizeUrl(container, url) {
  const text = String(url);
  const open = /^https?:\/\//i.test(text)
    ? h("button", { type: "button", class: "primary", onclick: () => window.open(text, "_blank", "noopener,noreferrer") }, "Open the sign-in page")
    : null;
  const card = h("div", { class: "ask oauth", "data-oauth": "" },
    h("h3", {}, "Sign in to the server"),
    h("p", {}, "If no tab opened by itself, open the authorization page; the inspector connects once you have signed in."),
    h("code", { class: "url" }, text), open);
  place(container, card);
}
