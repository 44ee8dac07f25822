// Every element is built here, and every string goes in as text: nothing a server sends becomes HTML.
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "class") el.className = value;
    else if (key === "value") el.value = value;
    else if (key === "checked") el.checked = Boolean(value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of [children].flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

export function clear(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

export function json(value) {
  return JSON.stringify(value, null, 2);
}

export function pre(text, cls = "") {
  return h("pre", { class: cls }, text);
}

// A collapsible block of JSON.
export function jsonBlock(value, summary = "JSON", open = false) {
  return h("details", { class: "json", open }, h("summary", {}, summary), pre(json(value)));
}

export function errorBox(err) {
  return h("div", { class: "error", role: "alert" }, String(err && err.message ? err.message : err));
}

// Copies text; where the clipboard is refused, the text is left selected in a box to copy by hand.
export async function copy(text, near) {
  try {
    await navigator.clipboard.writeText(text);
    flash(near, "copied");
  } catch {
    const box = h("textarea", { class: "copy-box", readonly: true, rows: 3 }, text);
    near.after(box);
    box.select();
  }
}

function flash(el, word) {
  const old = el.textContent;
  el.textContent = word;
  setTimeout(() => { el.textContent = old; }, 1200);
}
