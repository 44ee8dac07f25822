"""An online shop on a real SQLite database, served over MCP.

    python examples/commerce/server.py [--db PATH] [--http [--host H] [--port P] [--auth-issuer URL]]
    mcpkit serve examples/commerce/server.py [--http] [-- --db PATH]

The database path comes from --db, else $COMMERCE_DB, else ./commerce.db; it is migrated and
seeded with a small catalogue on first run.

With --auth-issuer (HTTP only) the server is an OAuth 2.1 resource server: every request needs an access
token (a JWT, RFC 9068) from that issuer, for this server's URL (--auth-resource, by default
http://HOST:PORT/mcp), granting --auth-scope (default mcp:tools); update_stock needs commerce:write too, and
a token without it neither sees nor may call it (403 insufficient_scope, so a client can step up).
An issuer URL that is not one (not https, http only on this machine; a query or fragment; an issuer that
answers but publishes no authorization server metadata for that URL) stops the server at start with one
line and exit code 2. The issuer's keys are fetched on first use, so the server starts even while the
issuer is down (it says so, and refuses tokens with 503 until the issuer answers).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shlex
import sqlite3
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
from pydantic import BaseModel, Field

from mcpkit import Context, Server, ToolError
from mcpkit.content import annotations

# db.py sits next to this file; load it by path so the example needs no package install.
_spec = importlib.util.spec_from_file_location("commerce_db", Path(__file__).with_name("db.py"))
assert _spec is not None and _spec.loader is not None
db = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("commerce_db", db)
_spec.loader.exec_module(db)

RETURN_REASONS = ["damaged", "wrong_item", "not_as_described", "no_longer_needed", "other"]
WRITE_SCOPE = "commerce:write"  # what update_stock asks of an access token (on HTTP with --auth-issuer)


class Inventory(BaseModel):
    sku: str
    name: str
    total: int = Field(description="Units across the warehouses reported")
    warehouses: dict[str, int] = Field(description="Units per warehouse code")


class StockUpdate(BaseModel):
    sku: str
    warehouse: str
    quantity: int = Field(description="Units now in this warehouse")
    total: int = Field(description="Units now across all warehouses")
    threshold: int
    low_stock: bool


def _price(cents: int) -> float:
    return round(cents / 100, 2)


def build_server(db_path: str | Path) -> Server:
    """A commerce Server on the SQLite database at `db_path` (created and seeded if new)."""
    db_path = str(db_path)
    db.initialise(db_path)
    server = Server(
        "mcpkit-commerce",
        "0.1.0",
        title="Commerce demo shop",
        instructions="An online coffee and tea shop: check and update stock, browse the catalogue, "
        "process returns.",
    )

    def query(sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        conn = db.connect(db_path)
        try:
            return conn.execute(sql, params).fetchall()
        finally:
            conn.close()

    async def run(fn: Any, *args: Any) -> Any:
        return await anyio.to_thread.run_sync(fn, *args)

    # ---- tools -------------------------------------------------------------------------------

    def _inventory(sku: str, warehouse: str | None) -> Inventory:
        product = query("SELECT sku, name FROM products WHERE sku = ?", (sku,))
        if not product:
            raise ToolError(f"Unknown SKU {sku!r}")
        if warehouse is not None and not query("SELECT 1 FROM warehouses WHERE code = ?", (warehouse,)):
            raise ToolError(f"Unknown warehouse {warehouse!r}")
        sql = (
            "SELECT w.code, COALESCE(s.quantity, 0) AS quantity FROM warehouses w"
            " LEFT JOIN stock s ON s.warehouse = w.code AND s.sku = ?"
        )
        params: tuple[Any, ...] = (sku,)
        if warehouse is not None:
            sql += " WHERE w.code = ?"
            params += (warehouse,)
        rows = query(sql + " ORDER BY w.code", params)
        per = {row["code"]: row["quantity"] for row in rows}
        return Inventory(sku=sku, name=product[0]["name"], total=sum(per.values()), warehouses=per)

    @server.tool(read_only=True, idempotent=True)
    async def check_inventory(sku: str, warehouse: str | None = None) -> Inventory:
        """Units in stock for a SKU, in total and per warehouse (or in one warehouse)."""
        result: Inventory = await run(_inventory, sku, warehouse)
        return result

    def _update_stock(sku: str, warehouse: str, delta: int) -> StockUpdate:
        conn = db.connect(db_path)
        try:
            conn.execute("BEGIN IMMEDIATE")  # take the write lock before reading: no lost updates
            try:
                product = conn.execute("SELECT threshold FROM products WHERE sku = ?", (sku,)).fetchone()
                if product is None:
                    raise ToolError(f"Unknown SKU {sku!r}")
                if conn.execute("SELECT 1 FROM warehouses WHERE code = ?", (warehouse,)).fetchone() is None:
                    raise ToolError(f"Unknown warehouse {warehouse!r}")
                row = conn.execute(
                    "SELECT quantity FROM stock WHERE sku = ? AND warehouse = ?", (sku, warehouse)
                ).fetchone()
                current = row["quantity"] if row else 0
                new = current + delta
                if new < 0:
                    raise ToolError(
                        f"Refused: {sku} in {warehouse} has {current} units; removing {-delta} "
                        "would make stock negative"
                    )
                conn.execute(
                    "INSERT INTO stock (sku, warehouse, quantity) VALUES (?, ?, ?)"
                    " ON CONFLICT (sku, warehouse) DO UPDATE SET quantity = excluded.quantity",
                    (sku, warehouse, new),
                )
                total = conn.execute("SELECT SUM(quantity) FROM stock WHERE sku = ?", (sku,)).fetchone()[0]
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        finally:
            conn.close()
        threshold = product["threshold"]
        return StockUpdate(
            sku=sku,
            warehouse=warehouse,
            quantity=new,
            total=total,
            threshold=threshold,
            low_stock=new < threshold,
        )

    @server.tool(destructive=False, idempotent=False, scopes=[WRITE_SCOPE])
    async def update_stock(sku: str, warehouse: str, delta: int, ctx: Context) -> StockUpdate:
        """Add (positive delta) or remove (negative delta) units of a SKU in one warehouse."""
        result: StockUpdate = await run(_update_stock, sku, warehouse, delta)
        if result.low_stock and delta < 0:
            await ctx.log(
                "warning",
                {
                    "message": f"Low stock: {sku} in {warehouse} is at {result.quantity}, "
                    f"below its threshold of {result.threshold}",
                    "sku": sku,
                    "warehouse": warehouse,
                    "quantity": result.quantity,
                    "threshold": result.threshold,
                },
            )
        await ctx.server.notify_resource_updated(f"commerce://products/{sku}")
        return result

    def _order_has(order_id: str, sku: str) -> bool:
        return bool(query("SELECT 1 FROM order_items WHERE order_id = ? AND sku = ?", (order_id, sku)))

    def _record_return(order_id: str, sku: str, reason: str) -> int:
        conn = db.connect(db_path)
        try:
            cursor = conn.execute(
                "INSERT INTO returns (order_id, sku, reason) VALUES (?, ?, ?)", (order_id, sku, reason)
            )
            return int(cursor.lastrowid or 0)
        finally:
            conn.close()

    @server.tool(destructive=False)
    async def process_return(order_id: str, sku: str, ctx: Context) -> str:
        """Ask the user why an item is coming back and to confirm, then record the return."""
        if not await run(_order_has, order_id, sku):
            raise ToolError(f"Order {order_id!r} has no item {sku!r}")
        answer = await ctx.elicit(
            f"Return {sku} from order {order_id}? Choose a reason and confirm.",
            {
                "type": "object",
                "properties": {
                    "reason": {"type": "string", "enum": RETURN_REASONS, "description": "Why it is returned"},
                    "confirm": {"type": "boolean", "description": "Confirm the return"},
                },
                "required": ["reason", "confirm"],
            },
        )
        if not answer.accepted or not answer.content:
            return f"No return recorded: the user chose to {answer.action}."
        if not answer.content.get("confirm"):
            return "No return recorded: the user did not confirm."
        reason = str(answer.content["reason"])
        return_id = await run(_record_return, order_id, sku, reason)
        return f"Return #{return_id} recorded for {sku} from order {order_id} (reason: {reason})."

    @server.tool(read_only=True, open_world=True)
    async def translate_description(sku: str, language: str, ctx: Context) -> str:
        """Translate a product description with the client's LLM (needs the client's sampling)."""
        rows = await run(query, "SELECT description FROM products WHERE sku = ?", (sku,))
        if not rows:
            raise ToolError(f"Unknown SKU {sku!r}")
        if "sampling" not in ctx.client_capabilities:
            raise ToolError(
                "translate_description needs sampling: this client did not declare the sampling "
                "capability, so the server cannot ask its LLM to translate."
            )
        result = await ctx.sample(
            f"Translate this product description into {language}. Reply with the translation only.\n\n"
            f"{rows[0]['description']}",
            max_tokens=300,
            system_prompt="You are a careful e-commerce translator.",
        )
        content = result.get("content", {})
        if isinstance(content, list):
            content = next((c for c in content if c.get("type") == "text"), {})
        translated = content.get("text") if isinstance(content, dict) else None
        if not translated:
            raise ToolError("The client's LLM returned no text for the translation")
        return str(translated)

    # ---- resources ---------------------------------------------------------------------------

    def categories() -> str:
        rows = query(
            "SELECT c.name, c.description, COUNT(p.sku) AS products FROM categories c"
            " LEFT JOIN products p ON p.category_id = c.id GROUP BY c.id ORDER BY c.name"
        )
        return json.dumps([dict(row) for row in rows])

    server.add_resource(
        "commerce://catalog/categories",
        categories,
        name="categories",
        title="Catalogue categories",
        description="Every category with its product count",
        mime_type="application/json",
        annotations=annotations(
            audience=["user", "assistant"],
            priority=0.8,
            last_modified=datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        ),
    )

    def _product(sku: str) -> str | None:
        rows = query(
            "SELECT p.sku, p.name, p.description, c.name AS category, p.price_cents, p.threshold"
            " FROM products p JOIN categories c ON c.id = p.category_id WHERE p.sku = ?",
            (sku,),
        )
        if not rows:
            return None
        row = rows[0]
        stock = query("SELECT warehouse, quantity FROM stock WHERE sku = ? ORDER BY warehouse", (sku,))
        per = {r["warehouse"]: r["quantity"] for r in stock}
        return json.dumps(
            {
                "sku": row["sku"],
                "name": row["name"],
                "description": row["description"],
                "category": row["category"],
                "price": _price(row["price_cents"]),
                "threshold": row["threshold"],
                "stock": per,
                "total_stock": sum(per.values()),
            }
        )

    @server.resource("commerce://products/{sku}", name="product", mime_type="application/json")
    async def product(sku: str) -> str | None:
        """One product with its price and stock per warehouse."""
        result: str | None = await run(_product, sku)
        return result

    def _order_items(order_id: str) -> str | None:
        order = query("SELECT id, customer, placed_at, status FROM orders WHERE id = ?", (order_id,))
        if not order:
            return None
        items = query(
            "SELECT i.sku, p.name, i.quantity, i.unit_price_cents FROM order_items i"
            " JOIN products p ON p.sku = i.sku WHERE i.order_id = ? ORDER BY i.sku",
            (order_id,),
        )
        lines = [
            {
                "sku": i["sku"],
                "name": i["name"],
                "quantity": i["quantity"],
                "unit_price": _price(i["unit_price_cents"]),
            }
            for i in items
        ]
        total = sum(i["quantity"] * i["unit_price_cents"] for i in items)
        return json.dumps({**dict(order[0]), "items": lines, "total": _price(total)})

    @server.resource("commerce://orders/{order_id}/items", name="order_items", mime_type="application/json")
    async def order_items(order_id: str) -> str | None:
        """The items of one order."""
        result: str | None = await run(_order_items, order_id)
        return result

    # ---- prompts -----------------------------------------------------------------------------

    @server.prompt(title="Product recommendation")
    def product_recommendation(category: str, budget: float | None = None) -> str:
        """Ask for a recommendation from one category of the catalogue, optionally within a budget."""
        sql = (
            "SELECT p.sku, p.name, p.description, p.price_cents FROM products p"
            " JOIN categories c ON c.id = p.category_id WHERE c.name = ?"
        )
        params: tuple[Any, ...] = (category,)
        if budget is not None:
            sql += " AND p.price_cents <= ?"
            params += (round(budget * 100),)
        rows = query(sql + " ORDER BY p.price_cents", params)
        limit = f" with a budget of {budget:.2f}" if budget is not None else ""
        listing = "\n".join(
            f"- {r['sku']}: {r['name']} ({_price(r['price_cents']):.2f}) - {r['description']}" for r in rows
        )
        return (
            f"Recommend a product from our {category!r} category{limit}.\n"
            f"Products available:\n{listing or '(none match)'}\n"
            "Explain briefly why your pick suits the customer."
        )

    @server.completion(prompt="product_recommendation", argument="category")
    def complete_category(value: str, context: dict[str, str]) -> list[str]:
        names = [row["name"] for row in query("SELECT name FROM categories ORDER BY name")]
        return [name for name in names if name.startswith(value.lower())]

    return server


def options(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="An MCP server for an online shop on SQLite")
    parser.add_argument("--db", default=os.environ.get("COMMERCE_DB", "commerce.db"))
    parser.add_argument("--http", action="store_true", help="serve Streamable HTTP instead of stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--auth-issuer", help="require access tokens from this OAuth authorization server")
    parser.add_argument("--auth-resource", help="this server's public URL (default http://HOST:PORT/mcp)")
    parser.add_argument("--auth-scope", default="mcp:tools", help="scopes every token needs")
    args = parser.parse_args(argv)
    if args.auth_issuer and not args.http:
        parser.error("--auth-issuer needs --http")
    if args.auth_issuer:
        wrong = issuer_shape(args.auth_issuer)
        if wrong:
            parser.exit(2, f"{parser.prog}: --auth-issuer {args.auth_issuer!r} {wrong}\n")
    return args


def issuer_shape(issuer: str) -> str | None:
    """Why `issuer` cannot be an OAuth issuer identifier, or None (RFC 8414 §2: an https URL with no query
    or fragment; plain http is allowed for an issuer on this machine only, as in development)."""
    parts = urlsplit(issuer)
    local = parts.hostname in ("localhost", "127.0.0.1", "::1")
    if parts.scheme != "https" and not (parts.scheme == "http" and local):
        return "is not an https URL (http only for localhost)"
    if not parts.hostname or parts.query or parts.fragment:
        return "is not an issuer URL: https://HOST[/PATH], without a query or fragment"
    return None


async def issuer_problem(issuer: str) -> tuple[str | None, bool]:
    """Why the issuer cannot be used, if it says so now, and whether it answered at all: an issuer that
    answers without metadata for `issuer` is a configuration error; one that does not answer may be down."""
    import httpx

    from mcpkit.auth import VerifierUnavailable
    from mcpkit.auth.discovery import server_metadata

    async with httpx.AsyncClient(timeout=5) as client:
        try:
            await server_metadata(client, issuer, 256 * 1024)
        except VerifierUnavailable as exc:
            return str(exc), not isinstance(exc.__cause__, httpx.HTTPError)
    return None, True


def check_issuer(issuer: str) -> None:
    """Exit (one line, code 2) when `issuer` answers but is not an authorization server; go on, saying
    so, when it does not answer now."""
    problem, answered = anyio.run(issuer_problem, issuer)
    if problem and answered:
        print(
            f"server.py: --auth-issuer {issuer!r} is not an authorization server: {problem}", file=sys.stderr
        )
        sys.exit(2)
    if problem:
        print(f"the issuer does not answer now ({problem}): tokens get 503 until it does", file=sys.stderr)


def create_server() -> Server:
    """What `mcpkit serve examples/commerce/server.py [-- --db PATH]` serves: the database named on the
    command line after `--`, as for `python server.py --db PATH`."""
    return build_server(options(sys.argv[1:]).db)


def main(argv: list[str] | None = None) -> None:
    args = options(argv)
    server = build_server(args.db)
    if args.http:
        serve(server, args)
    else:
        server.run()


def serve(server: Server, args: argparse.Namespace) -> None:
    """Serve over Streamable HTTP, behind access tokens when --auth-issuer is given."""
    import uvicorn

    from mcpkit.transports.http_server import StreamableHTTPApp

    if args.auth_issuer:
        check_issuer(args.auth_issuer)  # before anything is said about serving
    url = f"http://{args.host}:{args.port}/mcp"
    app: Any = StreamableHTTPApp(server)
    print(f"commerce server on {url} (database {Path(args.db).resolve()})", file=sys.stderr)
    if args.auth_issuer:
        from mcpkit.auth import JWTVerifier, protect

        resource, scopes = args.auth_resource or url, args.auth_scope.split()
        verifier = JWTVerifier(issuer=args.auth_issuer, audience=resource)
        app = protect(
            app,
            verifier=verifier,
            resource=resource,
            authorization_servers=[args.auth_issuer],
            scopes_supported=[*scopes, WRITE_SCOPE],
            required_scopes=scopes,
            resource_name="Commerce demo shop",
        )
        print(
            f"protected: tokens from {args.auth_issuer} for {resource} with scope {' '.join(scopes)}"
            f" ({WRITE_SCOPE} to update stock)",
            file=sys.stderr,
        )
        print("Connect with an OAuth client, e.g. mcpkit.client.oauth.OAuthClient.", file=sys.stderr)
    else:
        print("Try it from another shell:", file=sys.stderr)
        print(f"  {mcpkit_command()} call {url} check_inventory sku=COF-ETH-250", file=sys.stderr)
    uvicorn.run(app, host=args.host, port=args.port, lifespan="on", log_level="warning")


def mcpkit_command() -> str:
    """The `mcpkit` beside this interpreter (a venv's bin/), as a shell in this directory runs it: relative
    when under it (.venv/bin/mcpkit), else absolute; `python -m mcpkit.cli` when no script is installed."""
    script = Path(sys.executable).with_name("mcpkit")
    if not script.is_file():
        return f"{shlex.quote(sys.executable)} -m mcpkit.cli"
    try:
        return shlex.quote(str(script.relative_to(Path.cwd())))
    except ValueError:
        return shlex.quote(str(script))


if __name__ == "__main__":
    main()
