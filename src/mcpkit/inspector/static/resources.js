// The Resources and Prompts tabs: read a resource, fill a template (with completion), get a prompt.
import { act } from "./api.js";
import { clear, errorBox, h, jsonBlock } from "./dom.js";
import { promptResult, readResult } from "./render.js";
import { store } from "./store.js";

let listSeq = 0;

// A text input whose suggestions come from completion/complete as the user types.
function completing(ref, argument, values, label) {
  const id = `complete-${++listSeq}`;
  const datalist = h("datalist", { id });
  const input = h("input", { type: "text", list: id, "aria-label": label, name: argument });
  input.addEventListener("input", async () => {
    const context = Object.fromEntries(Object.entries(values()).filter(([k, v]) => k !== argument && v));
    try {
      const completion = await act("complete", { ref, argument, value: input.value, context });
      clear(datalist, (completion.values || []).map((v) => h("option", { value: String(v) })));
    } catch { /* the server has no completion for this: plain typing */ }
  });
  return { input, el: h("span", {}, input, datalist) };
}

async function read(out, uri) {
  clear(out, h("span", { class: "muted" }, `reading ${uri}…`));
  try { clear(out, subscribeButton(uri), readResult(await act("read", { uri }))); } catch (err) { clear(out, errorBox(err)); }
}

// resources/subscribe (handshake era, when the server offers it): updates arrive in the log.
function subscribeButton(uri) {
  const s = store.state || {};
  if (s.stateless || !((s.capabilities || {}).resources || {}).subscribe) return null;
  const button = h("button", { type: "button", class: "small", "data-subscribe": uri }, "subscribe");
  button.addEventListener("click", async () => {
    const off = button.dataset.on === "1";
    try {
      await act("subscribe", { uri, off });
      button.dataset.on = off ? "0" : "1";
      button.textContent = off ? "subscribe" : "unsubscribe (updates go to the log)";
    } catch (err) { button.after(errorBox(err)); }
  });
  return button;
}

export async function showResources(panel) {
  const [resources, templates] = await Promise.all([
    act("list", { kind: "resources" }), act("list", { kind: "templates" }).catch(() => []),
  ]);
  const out = h("div", { class: "outcome" });
  const resourceList = h("ul", { class: "items" }, resources.map((r) => h("li", {},
    h("button", { class: "item", "data-uri": r.uri, onclick: () => read(out, r.uri) },
      h("span", { class: "name" }, r.name || r.uri), h("span", { class: "muted" }, ` ${r.uri}`),
      r.mimeType ? h("span", { class: "muted" }, ` · ${r.mimeType}`) : null))));
  const templateForms = templates.map((t) => templateForm(t, out));
  clear(panel, h("div", { class: "split" },
    h("div", { class: "list" }, h("h3", {}, `Resources (${resources.length})`), resourceList,
      h("h3", {}, `Templates (${templates.length})`), templateForms),
    h("div", { class: "detail" }, out)));
}

function templateForm(template, out) {
  const names = [...String(template.uriTemplate).matchAll(/\{[+#./;?&]?([^}]+)\}/g)].flatMap((m) => m[1].split(",").map((n) => n.replace(/[*]|:\d+$/g, "")));
  const inputs = {};
  const values = () => Object.fromEntries(Object.entries(inputs).map(([k, c]) => [k, c.input.value]));
  const fields = names.map((name) => {
    inputs[name] = completing({ type: "ref/resource", uri: template.uriTemplate }, name, values, name);
    return h("label", { class: "field" }, h("span", { class: "field-name" }, name), inputs[name].el);
  });
  const submit = (e) => {
    e.preventDefault();
    const uri = String(template.uriTemplate).replace(/\{[+#./;?&]?([^}]+)\}/g, (_, n) => encodeURIComponent(values()[n] || ""));
    read(out, uri);
  };
  return h("form", { class: "template", onsubmit: submit },
    h("div", { class: "name" }, template.name || ""), h("code", {}, template.uriTemplate),
    template.description ? h("div", { class: "muted" }, template.description) : null,
    fields, h("button", { type: "submit" }, "Read"));
}

export async function showPrompts(panel) {
  const prompts = await act("list", { kind: "prompts" });
  const detail = h("div", { class: "detail" }, h("p", { class: "muted" }, "Choose a prompt."));
  const list = h("ul", { class: "items" }, prompts.map((p) => h("li", {},
    h("button", { class: "item", "data-prompt": p.name, onclick: () => promptForm(detail, p) },
      h("span", { class: "name" }, p.name), p.title ? h("span", { class: "muted" }, ` ${p.title}`) : null))));
  clear(panel, h("div", { class: "split" }, h("div", { class: "list" }, h("h3", {}, `Prompts (${prompts.length})`), list), detail));
}

function promptForm(detail, prompt) {
  const inputs = {};
  const values = () => Object.fromEntries(Object.entries(inputs).map(([k, c]) => [k, c.input.value]));
  const out = h("div", { class: "outcome" });
  const fields = (prompt.arguments || []).map((arg) => {
    inputs[arg.name] = completing({ type: "ref/prompt", name: prompt.name }, arg.name, values, arg.name);
    return h("label", { class: "field" },
      h("span", { class: "field-name" }, arg.name, arg.required ? h("b", { class: "req" }, " *") : null),
      inputs[arg.name].el, arg.description ? h("small", { class: "hint" }, arg.description) : null);
  });
  const submit = async (e) => {
    e.preventDefault();
    const args = Object.fromEntries(Object.entries(values()).filter(([, v]) => v !== ""));
    try { clear(out, promptResult(await act("prompt", { name: prompt.name, arguments: args }))); } catch (err) { clear(out, errorBox(err)); }
  };
  clear(detail, h("form", { class: "prompt", onsubmit: submit }, h("h3", {}, prompt.name),
    prompt.description ? h("p", { class: "description" }, prompt.description) : null, fields,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Get prompt")), out,
    jsonBlock(prompt, "prompt definition")));
}
