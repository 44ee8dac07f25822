// Results shown by content type. Binary media become data: URLs of a checked media type; all text is text.
import { h, json, jsonBlock, pre } from "./dom.js";

const MEDIA_TYPE = /^[a-z]+\/[a-z0-9.+-]+$/i;

function media(kind, block) {
  const type = String(block.mimeType || "");
  if (!MEDIA_TYPE.test(type) || !type.startsWith(`${kind}/`) || typeof block.data !== "string") {
    return h("span", { class: "muted" }, `<${kind} ${type}>`);
  }
  const src = `data:${type};base64,${block.data.replace(/[^A-Za-z0-9+/=]/g, "")}`;
  return kind === "image" ? h("img", { src, alt: `image (${type})`, class: "media" }) : h("audio", { src, controls: true });
}

function textOrJson(text) {
  try {
    const parsed = JSON.parse(text);
    if (parsed !== null && typeof parsed === "object") return pre(json(parsed), "text");
  } catch { /* plain text */ }
  return pre(text, "text");
}

export function resourceContents(item) {
  const head = h("div", { class: "meta" }, item.uri || "", item.mimeType ? ` · ${item.mimeType}` : "");
  if (typeof item.text === "string") return h("div", { class: "block" }, head, textOrJson(item.text));
  if (typeof item.blob === "string") {
    const type = String(item.mimeType || "");
    const body = type.startsWith("image/") ? media("image", { mimeType: type, data: item.blob })
      : type.startsWith("audio/") ? media("audio", { mimeType: type, data: item.blob })
      : h("span", { class: "muted" }, `binary, ${Math.floor((item.blob.length * 3) / 4)} bytes`);
    return h("div", { class: "block" }, head, body);
  }
  return h("div", { class: "block" }, head, jsonBlock(item));
}

export function contentBlock(block) {
  switch (block && block.type) {
    case "text": return h("div", { class: "block" }, textOrJson(String(block.text)));
    case "image": return h("div", { class: "block" }, media("image", block));
    case "audio": return h("div", { class: "block" }, media("audio", block));
    case "resource_link":
      return h("div", { class: "block" }, h("span", { class: "tag" }, "link"), ` ${block.uri || ""}`,
        block.name ? ` (${block.name})` : "", block.description ? h("div", { class: "muted" }, block.description) : null);
    case "resource": return h("div", { class: "block" }, h("span", { class: "tag" }, "embedded"), resourceContents(block.resource || {}));
    default: return h("div", { class: "block" }, jsonBlock(block, `${(block && block.type) || "unknown"} block`, true));
  }
}

export function toolResult(result) {
  const content = (result.content || []).map(contentBlock);
  const structured = "structuredContent" in result
    ? h("div", { class: "structured" }, h("h4", {}, "structuredContent"), pre(json(result.structuredContent)))
    : null;
  return h("div", { class: `result ${result.isError ? "is-error" : ""}` },
    result.isError ? h("div", { class: "error" }, "the tool reported an error (isError)") : null,
    h("div", { class: "side-by-side" }, h("div", { class: "content" }, content), structured),
    jsonBlock(result, "raw result"));
}

export function promptResult(result) {
  return h("div", { class: "result" },
    result.description ? h("p", { class: "muted" }, result.description) : null,
    (result.messages || []).map((m) => h("div", { class: "message" }, h("span", { class: "tag" }, m.role || "?"), contentBlock(m.content || {}))),
    jsonBlock(result, "raw result"));
}

export function readResult(result) {
  return h("div", { class: "result" }, (result.contents || []).map(resourceContents), jsonBlock(result, "raw result"));
}
