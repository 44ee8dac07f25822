// The Log tab: every JSON-RPC message both ways, server logs, notifications and the server's stderr,
// with filters; a request can be copied as an `mcpkit` command line.
import { clear, copy, h, json, pre } from "./dom.js";
import { asCommand } from "./command.js";
import { store } from "./store.js";

const entries = [];
const asked = new Map(); // "direction id" of a request -> its event, to name the answer and time it
const KEEP = 5000;
let list = null;
let filters = { direction: "all", kinds: new Set(["message", "log", "stderr", "status"]), text: "" };

function kindOf(event) {
  if (event.kind === "message" || event.kind === "log" || event.kind === "stderr") return event.kind;
  return "status";
}

function label(event) {
  const m = event.message || {};
  if (event.kind === "message") {
    if (m.method) return `${m.method}${"id" in m ? ` #${m.id}` : ""}`;
    const request = asked.get(`${event.direction === "in" ? "out" : "in"} ${m.id}`);
    const about = request ? ` (${request.message.method}, ${event.at - request.at} ms)` : "";
    return `${"error" in m ? "error" : "result"} #${m.id}${about}`;
  }
  if (event.kind === "log") return `[${event.params.level}]${event.params.logger ? ` ${event.params.logger}` : ""}`;
  if (event.kind === "stderr") return "stderr";
  return event.kind;
}

function matches(event) {
  if (!filters.kinds.has(kindOf(event))) return false;
  if (filters.direction !== "all" && event.kind === "message" && event.direction !== filters.direction) return false;
  return !filters.text || label(event).toLowerCase().includes(filters.text) || JSON.stringify(event).toLowerCase().includes(filters.text);
}

function row(event) {
  const m = event.message || {};
  const arrow = event.kind === "message" ? (event.direction === "out" ? "→" : "←") : "•";
  const body = event.kind === "message" ? m : event.kind === "log" ? event.params.data : event.kind === "stderr" ? event.line : event.error || event.state || event.target || "";
  const command = event.kind === "message" && event.direction === "out" && m.method ? asCommand(store.target, m) : null;
  const copyButton = command ? h("button", { type: "button", class: "small" }, "copy as command") : null;
  if (copyButton) copyButton.addEventListener("click", (e) => { e.preventDefault(); copy(command, copyButton); });
  const cls = `entry ${kindOf(event)} ${event.kind === "log" ? `level-${event.params.level}` : ""} ${"error" in m ? "is-error" : ""}`;
  return h("details", { class: cls, "data-kind": kindOf(event) },
    h("summary", {}, h("span", { class: "muted time" }, clock(event.at)), " ", h("span", { class: "arrow" }, arrow), " ", h("span", { class: "label" }, label(event)), " ",
      h("span", { class: "muted preview" }, typeof body === "string" ? body.slice(0, 160) : JSON.stringify(body).slice(0, 160))),
    pre(typeof body === "string" ? body : json(body)), copyButton);
}

function clock(at) {
  const d = new Date(at || 0);
  const two = (n) => String(n).padStart(2, "0");
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, "0")}`;
}

export function addLogEntry(event) {
  const m = event.message || {};
  if (event.kind === "message" && m.method && "id" in m) asked.set(`${event.direction} ${m.id}`, event);
  entries.push(event);
  if (entries.length > KEEP) entries.shift();
  document.getElementById("log-count").textContent = String(entries.length);
  if (list && matches(event)) {
    list.prepend(row(event));
    if (list.childElementCount > KEEP) list.lastElementChild.remove();
  }
}

export function showLog(panel) {
  list = h("div", { class: "log", id: "log-list" });
  const redraw = () => clear(list, entries.filter(matches).reverse().slice(0, KEEP).map(row));
  const direction = h("select", { "aria-label": "direction", onchange: () => { filters.direction = direction.value; redraw(); } },
    h("option", { value: "all" }, "both ways"), h("option", { value: "out" }, "→ sent"), h("option", { value: "in" }, "← received"));
  direction.value = filters.direction;
  const kinds = ["message", "log", "stderr", "status"].map((k) => h("label", { class: "inline" },
    h("input", { type: "checkbox", checked: filters.kinds.has(k), onchange: (e) => { if (e.target.checked) filters.kinds.add(k); else filters.kinds.delete(k); redraw(); } }), ` ${k}`));
  const text = h("input", { type: "search", placeholder: "filter (method, text…)", value: filters.text, "aria-label": "filter",
    oninput: () => { filters.text = text.value.toLowerCase(); redraw(); } });
  clear(panel, h("div", { class: "log-filters" }, direction, kinds, text,
    h("button", { type: "button", class: "small", onclick: () => { entries.length = 0; redraw(); } }, "clear")), list);
  redraw();
}
