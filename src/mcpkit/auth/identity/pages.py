"""The two pages the login proxy shows people: the consent page, which names the client, where it will
send the answer and what it asks for before anything goes to the provider, and the error page for
requests that may not be redirected anywhere. Every value is escaped; the pages run no script."""

from __future__ import annotations

from html import escape
from typing import Final
from urllib.parse import urlsplit

from ...protocol.oauth_clients import ClientInfo

__all__ = ["consent_page", "error_page"]

_STYLE: Final = """
body { font: 16px/1.5 system-ui, sans-serif; background: #f4f5f7; color: #1d2330; margin: 0; }
main { max-width: 34rem; margin: 4rem auto; background: #fff; border-radius: 12px; padding: 2rem 2.25rem;
       box-shadow: 0 2px 12px rgba(0, 0, 0, .08); }
h1 { font-size: 1.35rem; margin: 0 0 1rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .4rem 1rem; margin: 1.25rem 0; }
dt { color: #5b6475; } dd { margin: 0; word-break: break-all; }
code { background: #eef0f4; border-radius: 4px; padding: 0 .3rem; }
.actions { display: flex; gap: .75rem; margin-top: 1.5rem; }
button { font: inherit; padding: .55rem 1.4rem; border-radius: 8px; border: 1px solid #c5cad3;
         background: #fff; }
button[value=approve] { background: #1f5fd6; border-color: #1f5fd6; color: #fff; }
.note { color: #5b6475; font-size: .9rem; }
"""


def _page(title: str, body: str) -> str:
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
        f'<meta name="viewport" content="width=device-width"><style>{_STYLE}</style></head>'
        f"<body><main>{body}</main></body></html>"
    )


def consent_page(
    client: ClientInfo,
    redirect_uri: str,
    scopes: tuple[str, ...],
    resource: str,
    provider: str,
    fields: dict[str, str],
) -> str:
    """The consent page for `client`'s request; `fields` are the form's hidden values (consent, csrf)."""
    name = client.client_name or "An unnamed application"
    origin = "its metadata document at " if client.from_document else "registered as "
    scope_items = "".join(f"<code>{escape(s)}</code> " for s in scopes) or "nothing beyond signing in"
    hidden = "".join(
        f'<input type="hidden" name="{escape(k)}" value="{escape(v)}">' for k, v in fields.items()
    )
    back_to = urlsplit(redirect_uri)
    body = (
        f"<h1>{escape(name)} wants to use {escape(resource)}</h1>"
        f'<p id="client-name">Application: <strong>{escape(name)}</strong></p>'
        "<dl>"
        f"<dt>Client</dt><dd>{escape(origin)}<code>{escape(client.client_id)}</code></dd>"
        f"<dt>Returns to</dt><dd><code>{escape(back_to.scheme)}://{escape(back_to.netloc)}</code>"
        f" ({escape(redirect_uri)})</dd>"
        f'<dt>Asks for</dt><dd id="scopes">{scope_items}</dd>'
        f"<dt>Server</dt><dd><code>{escape(resource)}</code></dd>"
        "</dl>"
        f"<p class=note>Allowing sends you to {escape(provider)} to sign in. Only allow applications you"
        " started yourself.</p>"
        f'<form method="post" action="consent">{hidden}<div class="actions">'
        '<button type="submit" name="decision" value="approve" id="approve">Allow</button>'
        '<button type="submit" name="decision" value="deny" id="deny">Deny</button>'
        "</div></form>"
    )
    return _page(f"Allow {name}?", body)


def error_page(title: str, description: str) -> str:
    """A page for a request that cannot be answered to its client (unknown client, bad redirect URI)."""
    return _page(title, f"<h1>{escape(title)}</h1><p>{escape(description)}</p>")
