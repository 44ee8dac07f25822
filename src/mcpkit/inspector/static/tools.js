// The Tools tab: the list, a form per tool from its inputSchema, a call with live progress and cancel.
import { act } from "./api.js";
import { append, clear, copy, errorBox, h, jsonBlock } from "./dom.js";
import { schemaForm } from "./form.js";
import { toolResult } from "./render.js";
import { asCommand } from "./command.js";
import { store } from "./store.js";

let callSeq = 0;
const progressBars = new Map();

export function onProgress(event) {
  const bar = progressBars.get(event.callId);
  if (!bar) return;
  if (event.total) { bar.meter.max = event.total; bar.meter.value = event.progress; } else bar.meter.removeAttribute("value");
  bar.label.textContent = `${event.progress}${event.total ? ` / ${event.total}` : ""}${event.message ? ` — ${event.message}` : ""}`;
}

export async function showTools(panel) {
  const tools = await act("list", { kind: "tools" });
  const detail = h("div", { class: "detail" }, h("p", { class: "muted" }, "Choose a tool."));
  const list = h("ul", { class: "items" }, tools.map((tool) => h("li", {},
    h("button", { class: "item", "data-tool": tool.name, onclick: () => showTool(detail, tool) },
      h("span", { class: "name" }, tool.name), tool.title ? h("span", { class: "muted" }, ` ${tool.title}`) : null))));
  clear(panel, h("div", { class: "split" }, h("div", { class: "list" }, h("h3", {}, `Tools (${tools.length})`), list), detail));
}

function showTool(detail, tool) {
  const form = schemaForm(tool.inputSchema || {});
  const asTask = h("input", { type: "checkbox", id: "as-task" });
  const out = h("div", { class: "outcome" });
  const callButton = h("button", { type: "submit", class: "primary" }, "Call");
  const cancelButton = h("button", { type: "button", hidden: true }, "Cancel");
  const copyButton = h("button", { type: "button", class: "small" }, "copy as mcpkit call");
  copyButton.addEventListener("click", () => {
    let args = {};
    try { args = form.get(); } catch { /* the command shows {} */ }
    copy(asCommand(store.target, { method: "tools/call", params: { name: tool.name, arguments: args, task: asTask.checked } }), copyButton);
  });
  const annotations = tool.annotations ? Object.entries(tool.annotations).map(([k, v]) => h("span", { class: "tag" }, `${k}: ${v}`)) : [];
  const element = h("form", { class: "tool", onsubmit: (e) => { e.preventDefault(); call(); } },
    h("h3", {}, tool.name), tool.title ? h("div", { class: "muted" }, tool.title) : null,
    tool.description ? h("p", { class: "description" }, tool.description) : null,
    h("div", { class: "tags" }, annotations),
    form.el,
    h("div", { class: "actions" }, callButton, cancelButton, h("label", { class: "inline" }, asTask, " as a task"), copyButton),
    out,
    jsonBlock(tool, "tool definition"));
  clear(detail, element);

  async function call() {
    let args;
    try { args = form.get(); } catch (err) { clear(out, errorBox(`the arguments are not valid JSON: ${err.message}`)); return; }
    const callId = `call-${++callSeq}`;
    const meter = h("progress", {});
    const label = h("span", { class: "muted" }, "running…");
    progressBars.set(callId, { meter, label });
    clear(out, h("div", { class: "progress" }, meter, label));
    callButton.disabled = true;
    cancelButton.hidden = false;
    cancelButton.onclick = () => act("cancel", { callId });
    try {
      const result = await act("call", { name: tool.name, arguments: args, callId, task: asTask.checked });
      if (result.task) {
        store.addTask(result.task);
        clear(out, h("div", {}, "task started: ", h("code", {}, result.task.taskId), ` (${result.task.status}) — see the Tasks tab`));
      } else clear(out, toolResult(result.result || result));
    } catch (err) {
      clear(out, errorBox(err));
    } finally {
      progressBars.delete(callId);
      callButton.disabled = false;
      cancelButton.hidden = true;
    }
  }
  append(detail, []);
}
