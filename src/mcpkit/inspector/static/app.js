// The page: the connection bar, the tabs, and the events from the backend routed to each view.
import { act, listen } from "./api.js";
import { onAsk, onAsked } from "./asks.js";
import { clear, errorBox, h, json, jsonBlock, pre } from "./dom.js";
import { addLogEntry, showLog } from "./log.js";
import { clearOAuth, offerSignIn, onAuthorizeUrl } from "./oauth.js";
import { showPrompts, showResources } from "./resources.js";
import { store } from "./store.js";
import { onProgress, showTools } from "./tools.js";

const $ = (id) => document.getElementById(id);
let current = "server";

const views = {
  server: showServer,
  tools: showTools,
  resources: showResources,
  prompts: showPrompts,
  tasks: showTasks,
  roots: showRoots,
  log: showLog,
};

async function show(tab) {
  current = tab;
  document.body.dataset.tab = tab;
  for (const button of document.querySelectorAll("#tabs button")) button.classList.toggle("active", button.dataset.tab === tab);
  for (const panel of document.querySelectorAll(".tab")) panel.hidden = panel.id !== `tab-${tab}`;
  const panel = $(`tab-${tab}`);
  const needsServer = !["log", "roots"].includes(tab);
  if (needsServer && !(store.state && store.state.connected)) {
    clear(panel, h("p", { class: "muted" }, "Not connected: name a server above and Connect."));
    return;
  }
  clear(panel, h("p", { class: "muted" }, "loading…")); // nothing stale to click while the list comes
  try { await views[tab](panel); } catch (err) { clear(panel, errorBox(err)); }
}

function showServer(panel) {
  const s = store.state;
  const info = s.serverInfo || {};
  clear(panel, h("div", { class: "server" },
    h("h2", {}, info.title || info.name || "server", " ", h("span", { class: "muted" }, info.version || "")),
    h("dl", {},
      h("dt", {}, "name"), h("dd", {}, info.name || ""),
      h("dt", {}, "protocol"), h("dd", { id: "protocol" }, s.protocol || ""),
      h("dt", {}, "era"), h("dd", { id: "era-shown" }, s.stateless ? "stateless (2026-07-28)" : "handshake (initialize)"),
      h("dt", {}, "target"), h("dd", {}, s.target || "")),
    s.instructions ? h("div", {}, h("h3", {}, "instructions"), pre(s.instructions)) : null,
    h("h3", {}, "capabilities"), pre(json(s.capabilities || {})),
    levelPicker(s), jsonBlock(info, "serverInfo")));
}

function levelPicker(s) {
  if (!(s.capabilities || {}).logging) return null;
  const levels = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];
  const select = h("select", { "aria-label": "log level", onchange: () => act("setLevel", { level: select.value }) },
    levels.map((l) => h("option", { value: l }, l)));
  return h("label", { class: "field" }, h("span", { class: "field-name" }, "server log level"), select);
}

function showTasks(panel) {
  const rows = [...store.tasks.values()].map((task) => {
    const out = h("div", { class: "outcome" });
    const run = (op) => async () => {
      try {
        const answer = await act("task", { taskId: task.taskId, op });
        if (op === "result") clear(out, jsonBlock(answer, "result", true));
        else { Object.assign(task, answer); show("tasks"); }
      } catch (err) { clear(out, errorBox(err)); }
    };
    return h("div", { class: "task", "data-task": task.taskId },
      h("code", {}, task.taskId), " ", h("span", { class: `tag status-${task.status}` }, task.status),
      task.statusMessage ? h("span", { class: "muted" }, ` ${task.statusMessage}`) : null,
      h("div", { class: "actions" }, h("button", { type: "button", onclick: run("get") }, "Poll"),
        h("button", { type: "button", onclick: run("result") }, "Result"),
        h("button", { type: "button", onclick: run("cancel") }, "Cancel")), out);
  });
  clear(panel, h("h3", {}, "Tasks started here"),
    rows.length ? rows : h("p", { class: "muted" }, "None yet: call a tool with “as a task” ticked."));
}

function showRoots(panel) {
  const area = h("textarea", { rows: 6, "aria-label": "roots", class: "json-input" }, json(store.state ? store.state.roots : []));
  const out = h("div", {});
  const save = async () => {
    try {
      const roots = JSON.parse(area.value);
      await act("roots", { roots });
      clear(out, h("span", { class: "muted" }, "saved; the server was told the roots changed"));
    } catch (err) { clear(out, errorBox(err)); }
  };
  clear(panel, h("h3", {}, "Roots offered to the server"),
    h("p", { class: "muted" }, 'A JSON list like [{"uri": "file:///home/me/project", "name": "project"}].'),
    area, h("div", { class: "actions" }, h("button", { type: "button", class: "primary", onclick: save }, "Save roots")), out);
}

let stateAsked = 0;
let shownFor = null;

async function refreshState(error) {
  const mine = ++stateAsked;
  const state = await act("state");
  if (mine !== stateAsked) return; // an answer overtaken by a later question (connect right after disconnect)
  store.state = state;
  store.target = store.state.target || "";
  const s = store.state;
  if (s.target && !$("target").value) $("target").value = s.target;
  if (s.era) $("era").value = s.era;
  const info = s.serverInfo || {};
  $("status").textContent = s.connected ? `connected: ${info.name || "?"} · ${s.protocol}` : `not connected${error ? ` — ${error}` : ""}`;
  document.body.classList.toggle("connected", Boolean(s.connected));
  // the same connection told twice (the page's first look, then the replayed event) keeps the view as it
  // is: drawing it again would wipe a form being filled in
  const key = JSON.stringify([s.connected, s.target, s.protocol, s.stateless, s.serverInfo]);
  if (key !== shownFor) { shownFor = key; show(current); }
}

function onEvent(event) {
  switch (event.kind) {
    case "progress": onProgress(event); break;
    case "ask": onAsk(event, $("asks")); break;
    case "asked": onAsked(event); break;
    case "task": store.tasks.set(event.task.taskId, event.task); if (current === "tasks") show("tasks"); break;
    case "connected": clearOAuth(); refreshState(); break;
    case "disconnected":
      refreshState(event.error);
      if (/wants credentials/.test(event.error || "")) offerSignIn($("asks"), connectBody);
      break;
    case "oauth": onAuthorizeUrl($("asks"), event.url); break;
    case "notification":
      if (event.method === "notifications/tasks/status" || event.method === "notifications/tasks") {
        const known = store.tasks.get(event.params.taskId);
        if (known) { Object.assign(known, event.params); if (current === "tasks") show("tasks"); }
      }
      if (/list_changed$/.test(event.method) && ["tools", "resources", "prompts"].includes(current)) show(current);
      break;
    default: break;
  }
  if (["message", "log", "stderr", "connecting", "connected", "disconnected"].includes(event.kind)) addLogEntry(event);
}

function connectBody() {
  return { target: $("target").value, era: $("era").value };
}

function start() {
  for (const button of document.querySelectorAll("#tabs button")) button.addEventListener("click", () => show(button.dataset.tab));
  store.onTasks = () => { if (current === "tasks") show("tasks"); };
  $("connect").addEventListener("submit", async (e) => {
    e.preventDefault();
    $("status").textContent = "connecting…";
    try { await act("connect", connectBody()); } catch (err) {
      $("status").textContent = `failed: ${err.message}`;
      if (/wants credentials|401/.test(err.message)) offerSignIn($("asks"), connectBody);
    }
  });
  $("disconnect-button").addEventListener("click", () => act("disconnect"));
  listen(onEvent, () => document.body.classList.remove("offline"), () => document.body.classList.add("offline"));
  refreshState().catch((err) => clear($("tab-server"), errorBox(err)));
}

start();
