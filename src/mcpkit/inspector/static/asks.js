// Requests from the server (elicitation in form and URL modes, sampling), answered by hand in the page.
import { act } from "./api.js";
import { clear, errorBox, h, json, pre } from "./dom.js";
import { schemaForm } from "./form.js";

const cards = new Map();

export function onAsk(event, container) {
  const card = event.method === "elicitation/create" ? elicitationCard(event) : samplingCard(event);
  cards.set(event.id, card);
  container.append(card);
}

export function onAsked(event) {
  const card = cards.get(event.id);
  if (card) { card.remove(); cards.delete(event.id); }
}

async function answer(card, id, body) {
  try { await act("answer", { id, ...body }); } catch (err) { card.append(errorBox(err)); }
}

function elicitationCard(event) {
  const p = event.params || {};
  const card = h("form", { class: "ask", "data-ask": event.id });
  const reply = (action, content) => answer(card, event.id, { result: content ? { action, content } : { action } });
  const buttons = (accept) => h("div", { class: "actions" }, accept,
    h("button", { type: "button", onclick: () => reply("decline") }, "Decline"),
    h("button", { type: "button", onclick: () => reply("cancel") }, "Cancel"));
  if (p.mode === "url") {
    const url = String(p.url || "");
    const open = /^https?:\/\//i.test(url) ? h("button", { type: "button", onclick: () => window.open(url, "_blank", "noopener,noreferrer") }, "Open the page") : null;
    clear(card, h("h3", {}, "The server asks you to visit a URL"), h("p", {}, p.message || ""),
      h("code", { class: "url" }, url), open,
      buttons(h("button", { type: "button", class: "primary", onclick: () => reply("accept") }, "Accept")));
    return card;
  }
  const form = schemaForm(p.requestedSchema || { type: "object", properties: {} });
  card.addEventListener("submit", (e) => {
    e.preventDefault();
    let content;
    try { content = form.get(); } catch (err) { card.append(errorBox(err)); return; }
    reply("accept", content);
  });
  clear(card, h("h3", {}, "The server asks for input"), h("p", {}, p.message || ""), form.el,
    buttons(h("button", { type: "submit", class: "primary" }, "Accept")));
  return card;
}

function samplingCard(event) {
  const p = event.params || {};
  const card = h("form", { class: "ask", "data-ask": event.id });
  const text = h("textarea", { rows: 4, "aria-label": "reply", placeholder: "the assistant's reply" });
  const model = h("input", { type: "text", value: "human", "aria-label": "model" });
  card.addEventListener("submit", (e) => {
    e.preventDefault();
    answer(card, event.id, { result: { role: "assistant", content: { type: "text", text: text.value }, model: model.value, stopReason: "endTurn" } });
  });
  const messages = (p.messages || []).map((m) => h("div", { class: "message" }, h("span", { class: "tag" }, m.role || "?"),
    pre(m.content && m.content.type === "text" ? m.content.text : json(m.content))));
  clear(card, h("h3", {}, "The server asks for an LLM completion (sampling)"),
    p.systemPrompt ? h("div", {}, h("span", { class: "tag" }, "system"), pre(p.systemPrompt)) : null,
    messages, h("details", {}, h("summary", {}, "all parameters"), pre(json(p))),
    h("label", { class: "field" }, h("span", { class: "field-name" }, "reply"), text),
    h("label", { class: "field" }, h("span", { class: "field-name" }, "model"), model),
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Send reply"),
      h("button", { type: "button", onclick: () => answer(card, event.id, { error: "The user rejected the sampling request" }) }, "Reject")));
  return card;
}
