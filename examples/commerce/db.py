"""SQLite storage for the commerce example: connections, ordered migrations and a seed catalogue."""

from __future__ import annotations

import sqlite3
from pathlib import Path

BUSY_TIMEOUT_MS = 10_000

# Ordered: migration N is MIGRATIONS[N - 1]; schema_version records the highest one applied.
MIGRATIONS: list[str] = [
    """
    CREATE TABLE categories (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        description TEXT NOT NULL
    );
    CREATE TABLE products (
        sku TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        description TEXT NOT NULL,
        category_id INTEGER NOT NULL REFERENCES categories(id),
        price_cents INTEGER NOT NULL CHECK (price_cents >= 0),
        threshold INTEGER NOT NULL DEFAULT 5
    );
    CREATE TABLE warehouses (
        code TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        city TEXT NOT NULL
    );
    CREATE TABLE stock (
        sku TEXT NOT NULL REFERENCES products(sku),
        warehouse TEXT NOT NULL REFERENCES warehouses(code),
        quantity INTEGER NOT NULL CHECK (quantity >= 0),
        PRIMARY KEY (sku, warehouse)
    );
    """,
    """
    CREATE TABLE orders (
        id TEXT PRIMARY KEY,
        customer TEXT NOT NULL,
        placed_at TEXT NOT NULL,
        status TEXT NOT NULL
    );
    CREATE TABLE order_items (
        order_id TEXT NOT NULL REFERENCES orders(id),
        sku TEXT NOT NULL REFERENCES products(sku),
        quantity INTEGER NOT NULL CHECK (quantity > 0),
        unit_price_cents INTEGER NOT NULL,
        PRIMARY KEY (order_id, sku)
    );
    """,
    """
    CREATE TABLE returns (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        order_id TEXT NOT NULL REFERENCES orders(id),
        sku TEXT NOT NULL REFERENCES products(sku),
        reason TEXT NOT NULL,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
    );
    """,
]

CATEGORIES = [
    ("coffee", "Whole-bean and ground coffee"),
    ("brewing", "Brewers, grinders and kettles"),
    ("tea", "Loose-leaf teas"),
    ("accessories", "Cups, filters and cleaning supplies"),
]

# sku, name, description, category, price (cents), low-stock threshold
PRODUCTS = [
    (
        "COF-ETH-250",
        "Ethiopia Yirgacheffe 250g",
        "Washed Arabica with notes of bergamot and lemon.",
        "coffee",
        1450,
        10,
    ),
    ("COF-COL-250", "Colombia Huila 250g", "Medium roast with caramel sweetness.", "coffee", 1250, 10),
    (
        "COF-ESP-1K",
        "House Espresso Blend 1kg",
        "Chocolatey blend for espresso and milk drinks.",
        "coffee",
        3900,
        5,
    ),
    ("BRW-V60-02", "Ceramic Pour-Over Dripper", "Cone dripper, size 02, white ceramic.", "brewing", 2600, 4),
    ("BRW-GRN-HND", "Hand Grinder", "Stainless steel conical burr hand grinder.", "brewing", 8900, 3),
    ("BRW-KTL-GOO", "Gooseneck Kettle 1L", "Stovetop kettle, precise spout.", "brewing", 4500, 3),
    ("TEA-SEN-100", "Japanese Sencha 100g", "Steamed green tea, grassy and bright.", "tea", 1800, 6),
    ("TEA-ASS-200", "Assam Breakfast 200g", "Malty black tea that takes milk well.", "tea", 1100, 6),
    ("TEA-CHA-100", "Chamomile Flowers 100g", "Whole chamomile blossoms, caffeine free.", "tea", 950, 6),
    ("ACC-MUG-350", "Stoneware Mug 350ml", "Hand-glazed mug, dishwasher safe.", "accessories", 1600, 8),
    ("ACC-FLT-100", "Paper Filters x100", "Unbleached filters for size 02 drippers.", "accessories", 600, 20),
    (
        "ACC-CLN-TAB",
        "Espresso Cleaning Tablets",
        "Twenty tablets for backflushing machines.",
        "accessories",
        1300,
        5,
    ),
]

WAREHOUSES = [
    ("LON", "London Docklands", "London"),
    ("MAN", "Manchester North", "Manchester"),
    ("EDI", "Edinburgh Leith", "Edinburgh"),
]

# sku -> quantities in LON, MAN, EDI
STOCK = {
    "COF-ETH-250": (40, 25, 12),
    "COF-COL-250": (55, 30, 18),
    "COF-ESP-1K": (20, 8, 4),
    "BRW-V60-02": (15, 6, 3),
    "BRW-GRN-HND": (7, 2, 1),
    "BRW-KTL-GOO": (9, 4, 2),
    "TEA-SEN-100": (22, 10, 9),
    "TEA-ASS-200": (30, 14, 11),
    "TEA-CHA-100": (18, 7, 5),
    "ACC-MUG-350": (60, 24, 15),
    "ACC-FLT-100": (120, 80, 40),
    "ACC-CLN-TAB": (12, 5, 0),
}

ORDERS = [
    ("ORD-1001", "Ada Lovelace", "2026-11-20T09:15:00Z", "shipped", [("COF-ETH-250", 2), ("ACC-FLT-100", 1)]),
    (
        "ORD-1002",
        "Alan Turing",
        "2026-11-24T14:02:00Z",
        "delivered",
        [("BRW-GRN-HND", 1), ("COF-COL-250", 1)],
    ),
    (
        "ORD-1003",
        "Grace Hopper",
        "2026-11-29T18:40:00Z",
        "processing",
        [("TEA-SEN-100", 1), ("ACC-MUG-350", 2), ("TEA-CHA-100", 1)],
    ),
]


def connect(path: str | Path) -> sqlite3.Connection:
    """A fresh connection (one per call: sqlite3 connections are not shared across threads)."""
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def schema_version(conn: sqlite3.Connection) -> int:
    conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
    return int(row[0] or 0)


def migrate(conn: sqlite3.Connection) -> int:
    """Apply the migrations not yet recorded, each in its own transaction; the new version."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        current = schema_version(conn)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    for number, script in enumerate(MIGRATIONS, start=1):
        if number <= current:
            continue
        statements = [s.strip() for s in script.split(";") if s.strip()]
        conn.execute("BEGIN IMMEDIATE")
        try:
            if schema_version(conn) >= number:  # another process got here first
                conn.execute("ROLLBACK")
                continue
            for statement in statements:
                conn.execute(statement)
            conn.execute("INSERT INTO schema_version (version) VALUES (?)", (number,))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        current = number
    return current


def seed(conn: sqlite3.Connection) -> bool:
    """Fill an empty catalogue; True if it seeded anything."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        if conn.execute("SELECT COUNT(*) FROM products").fetchone()[0]:
            conn.execute("ROLLBACK")
            return False
        conn.executemany("INSERT INTO categories (name, description) VALUES (?, ?)", CATEGORIES)
        ids = {row["name"]: row["id"] for row in conn.execute("SELECT id, name FROM categories")}
        conn.executemany(
            "INSERT INTO products (sku, name, description, category_id, price_cents, threshold)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [(sku, name, desc, ids[cat], price, thr) for sku, name, desc, cat, price, thr in PRODUCTS],
        )
        conn.executemany("INSERT INTO warehouses (code, name, city) VALUES (?, ?, ?)", WAREHOUSES)
        codes = [code for code, _, _ in WAREHOUSES]
        conn.executemany(
            "INSERT INTO stock (sku, warehouse, quantity) VALUES (?, ?, ?)",
            [(sku, code, qty) for sku, qtys in STOCK.items() for code, qty in zip(codes, qtys, strict=True)],
        )
        prices = {sku: price for sku, _, _, _, price, _ in PRODUCTS}
        for order_id, customer, placed_at, status, items in ORDERS:
            conn.execute(
                "INSERT INTO orders (id, customer, placed_at, status) VALUES (?, ?, ?, ?)",
                (order_id, customer, placed_at, status),
            )
            conn.executemany(
                "INSERT INTO order_items (order_id, sku, quantity, unit_price_cents) VALUES (?, ?, ?, ?)",
                [(order_id, sku, qty, prices[sku]) for sku, qty in items],
            )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return True


def initialise(path: str | Path) -> None:
    """Migrate and seed the database at `path` (safe to call on every start)."""
    conn = connect(path)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        migrate(conn)
        seed(conn)
    finally:
        conn.close()
