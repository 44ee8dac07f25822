"""An example sampler for the `mcpkit` command:
`mcpkit call SERVER TOOL --sampling "python examples/sampler.py"`.

The sampler contract (what `--sampling CMD` runs once per sampling/createMessage request):
- stdin: the request's params as one JSON object: `messages` (each a role and a content block, or a list
  of blocks), `maxTokens`, and when the server sends them `systemPrompt`, `modelPreferences`,
  `temperature`, `stopSequences`, `includeContext`, `tools`, `toolChoice`, `metadata`.
- stdout, exit status 0: a CreateMessageResult as JSON, e.g. {"role": "assistant", "content":
  {"type": "text", "text": "..."}, "model": "my-model", "stopReason": "endTurn"}
  (`content` required; `role` defaults to "assistant", `model` to the command's name), or plain text,
  which becomes the assistant's text reply.
- failure: exit non-zero with the reason as the last line of stderr. mcpkit sends the server an error
  naming it, so the tool (and the model that called it) sees why.

This one puts a person in the model's place: it shows the conversation on the terminal and sends what
they type (an empty line declines, as an error). With --echo it answers at once with the last user
text, for trying a server without a model. To use a real model, print its reply instead.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def text_of(content: Any) -> str:
    """The text of a content block (or list of blocks), its control characters shown escaped: the
    server wrote it, and raw escape sequences could rewrite the terminal."""
    blocks = content if isinstance(content, list) else [content]
    text = " ".join(str(b.get("text", f"<{b.get('type')}>")) for b in blocks if isinstance(b, dict))
    return "".join(c if c.isprintable() or c in "\n\t" else repr(c)[1:-1] for c in text)


def main() -> int:
    params = json.load(sys.stdin)
    messages = params.get("messages", [])
    if "--echo" in sys.argv:
        last = next((m for m in reversed(messages) if m.get("role") == "user"), {})
        reply = f"echo: {text_of(last.get('content'))}"
    else:
        with open("/dev/tty") as keys, open("/dev/tty", "w") as tty:  # stdin and stdout are mcpkit's
            if params.get("systemPrompt"):
                print(f"[system] {text_of({'text': params['systemPrompt']})}", file=tty)
            for message in messages:
                role = text_of({"text": message.get("role")})
                print(f"[{role}] {text_of(message.get('content'))}", file=tty)
            print(f"Your reply as the model (up to {params.get('maxTokens')} tokens):", file=tty, flush=True)
            reply = keys.readline().strip()
        if not reply:
            print("the person at the terminal declined to answer", file=sys.stderr)
            return 1
    result = {
        "role": "assistant",
        "content": {"type": "text", "text": reply},
        "model": "sampler.py",
        "stopReason": "endTurn",
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
