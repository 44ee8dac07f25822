// The inspector's own backend: one POST per action, and a stream of events (SSE).
const token = new URLSearchParams(location.search).get("token") || "";

export async function act(name, body = {}) {
  const response = await fetch(`/api/${name}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  let data = {};
  try { data = await response.json(); } catch { data = { error: `HTTP ${response.status}` }; }
  if (!response.ok) {
    const code = data.errorCode !== undefined ? ` (error ${data.errorCode})` : "";
    throw new Error(`${data.error || response.status}${code}`);
  }
  return data.result;
}

export function listen(onEvent, onOpen, onError) {
  const source = new EventSource(`/api/events?token=${encodeURIComponent(token)}`);
  source.onmessage = (e) => onEvent(JSON.parse(e.data));
  source.onopen = onOpen;
  source.onerror = onError;
  return source;
}
