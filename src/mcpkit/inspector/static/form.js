// A form generated from a JSON Schema: each editor is {el, get()} where get() is the value or undefined
// (left empty). What the generator cannot show as fields is edited as JSON.
import { h, json } from "./dom.js";

function resolve(schema, root) {
  let seen = 0;
  while (schema && typeof schema.$ref === "string" && schema.$ref.startsWith("#/") && seen++ < 20) {
    let node = root;
    for (const part of schema.$ref.slice(2).split("/")) node = node ? node[part.replace(/~1/g, "/").replace(/~0/g, "~")] : undefined;
    schema = { ...(node || {}), ...Object.fromEntries(Object.entries(schema).filter(([k]) => k !== "$ref")) };
  }
  return schema || {};
}

// An optional T (anyOf [T, null]) is edited as T, left empty for null.
function simplify(schema, root) {
  schema = resolve(schema, root);
  const choices = schema.anyOf || schema.oneOf;
  if (Array.isArray(choices)) {
    const real = choices.map((c) => resolve(c, root)).filter((c) => c.type !== "null");
    if (real.length === 1) return { ...real[0], title: schema.title || real[0].title, description: schema.description || real[0].description, default: schema.default };
  }
  if (Array.isArray(schema.type)) {
    const real = schema.type.filter((t) => t !== "null");
    if (real.length === 1) return { ...schema, type: real[0] };
  }
  return schema;
}

function kindOf(schema) {
  if (Array.isArray(schema.enum)) return "enum";
  if (typeof schema.type === "string") return schema.type;
  if (schema.properties) return "object";
  return "json";
}

function jsonEditor(schema, required) {
  const area = h("textarea", { rows: 3, class: "json-input", placeholder: "JSON" });
  if (schema.default !== undefined) area.value = json(schema.default);
  return {
    el: area,
    get() {
      if (area.value.trim() === "") return undefined;
      return JSON.parse(area.value);
    },
  };
}

function scalarEditor(kind, schema, required, label, path) {
  if (kind === "enum") {
    const select = h("select", { "aria-label": label, "data-path": path },
      required ? null : h("option", { value: "" }, "—"),
      schema.enum.map((v, i) => h("option", { value: String(i) }, JSON.stringify(v))));
    if (schema.default !== undefined) select.value = String(schema.enum.findIndex((v) => v === schema.default));
    return { el: select, get: () => (select.value === "" ? undefined : schema.enum[Number(select.value)]) };
  }
  if (kind === "boolean") {
    const select = h("select", { "aria-label": label, "data-path": path }, h("option", { value: "" }, "—"),
      h("option", { value: "true" }, "true"), h("option", { value: "false" }, "false"));
    if (typeof schema.default === "boolean") select.value = String(schema.default);
    return { el: select, get: () => (select.value === "" ? undefined : select.value === "true") };
  }
  const numeric = kind === "number" || kind === "integer";
  const input = h("input", {
    type: numeric ? "number" : "text", step: kind === "integer" ? "1" : numeric ? "any" : null,
    min: schema.minimum, max: schema.maximum, "aria-label": label, "data-path": path, required,
    placeholder: schema.format || kind,
  });
  if (schema.default !== undefined && schema.default !== null) input.value = String(schema.default);
  return {
    el: input,
    get() {
      if (input.value === "") return required && !numeric ? "" : undefined;
      return numeric ? Number(input.value) : input.value;
    },
  };
}

function arrayEditor(schema, root, label, path) {
  const rows = [];
  const list = h("div", { class: "array" });
  const add = h("button", { type: "button", class: "small", "data-add": path, onclick: () => addRow() }, "+ item");
  function addRow() {
    const item = editor(schema.items || {}, root, `${label}[${rows.length}]`, true, `${path}[${rows.length}]`);
    const row = h("div", { class: "array-row" }, item.el);
    const remove = h("button", { type: "button", class: "small", onclick: () => { rows.splice(rows.indexOf(item), 1); row.remove(); } }, "×");
    row.append(remove);
    rows.push(item);
    list.append(row);
  }
  return {
    el: h("div", {}, list, add),
    get: () => (rows.length ? rows.map((r) => r.get()) : undefined),
  };
}

function objectEditor(schema, root, label, path) {
  const required = new Set(schema.required || []);
  const fields = Object.entries(schema.properties || {}).map(([name, sub]) => {
    const child = editor(sub, root, name, required.has(name), path ? `${path}.${name}` : name);
    return [name, child];
  });
  const el = h("div", { class: "object" }, fields.map(([, f]) => f.row || f.el));
  return {
    el,
    get() {
      const out = {};
      for (const [name, f] of fields) {
        const v = f.get();
        if (v !== undefined) out[name] = v;
      }
      return Object.keys(out).length || required.size ? out : undefined;
    },
  };
}

export function editor(schema, root, name, required, path = name) {
  schema = simplify(schema, root);
  const kind = kindOf(schema);
  let inner;
  if (kind === "object" && schema.properties) inner = objectEditor(schema, root, name, path);
  else if (kind === "array" && schema.items && kindOf(simplify(schema.items, root)) !== "json") inner = arrayEditor(schema, root, name, path);
  else if (["string", "number", "integer", "boolean", "enum"].includes(kind)) inner = scalarEditor(kind, schema, required, name, path);
  else inner = jsonEditor(schema, required);
  inner.el.dataset.path = inner.el.dataset.path || path;
  const title = schema.title && schema.title !== name ? ` (${schema.title})` : "";
  inner.row = h("label", { class: "field" },
    h("span", { class: "field-name" }, name, required ? h("b", { class: "req", title: "required" }, " *") : null, title),
    inner.el,
    schema.description ? h("small", { class: "hint" }, schema.description) : null);
  return inner;
}

// The whole form for an object schema (a tool's inputSchema, an elicitation's requestedSchema), with
// a switch to edit the arguments as JSON instead.
export function schemaForm(schema) {
  const root = schema || {};
  const fields = objectEditor(simplify(root, root), root, "", "");
  const raw = h("textarea", { rows: 6, class: "json-input", hidden: true, "aria-label": "arguments as JSON" });
  let asJson = false;
  const toggle = h("button", { type: "button", class: "small", onclick: () => {
    if (!asJson) { raw.value = json(fields.get() || {}); }
    asJson = !asJson;
    raw.hidden = !asJson;
    fields.el.hidden = asJson;
    toggle.textContent = asJson ? "edit as form" : "edit as JSON";
  } }, "edit as JSON");
  return {
    el: h("div", { class: "schema-form" }, fields.el, raw, toggle),
    get: () => (asJson ? JSON.parse(raw.value || "{}") : fields.get() || {}),
  };
}
