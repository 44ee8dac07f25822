// A request from the log as an `mcpkit` command line (POSIX shell quoting).
export function quote(word) {
  const s = String(word);
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

export function asCommand(target, message) {
  const p = message.params || {};
  const server = quote(target || "SERVER");
  switch (message.method) {
    case "tools/call": return `mcpkit call ${server} ${quote(p.name)} --args ${quote(JSON.stringify(p.arguments || {}))}${p.task || (p._meta && Object.keys(p._meta).some((k) => k.includes("tasks"))) ? " --task" : ""}`;
    case "tools/list": return `mcpkit list ${server} tools`;
    case "resources/list": return `mcpkit list ${server} resources`;
    case "resources/templates/list": return `mcpkit list ${server} templates`;
    case "prompts/list": return `mcpkit list ${server} prompts`;
    case "resources/read": return `mcpkit read ${server} ${quote(p.uri)}`;
    case "prompts/get": return `mcpkit prompt ${server} ${quote(p.name)} ${Object.entries(p.arguments || {}).map(([k, v]) => quote(`${k}=${v}`)).join(" ")}`.trim();
    case "ping": case "server/discover": return `mcpkit ping ${server}`;
    default: return null;
  }
}
