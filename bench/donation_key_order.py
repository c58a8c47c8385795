#!/usr/bin/env python3
"""How much the order of the donation-key copy matters (docs/storage.md, "Donation keys are written in batches").

SQLite alone, the store's tables and statement: N donation rows with 128-bit random ids (what an app making UUIDs
sends), then their keys copied into `donation_key` in chunks of 8,192, each in its own transaction, as the writer
does; CPU time of the copies, unsorted against `ORDER BY app, donation, seq`, alternating, ROUNDS rounds.

    python3 bench/donation_key_order.py [N] [ROUNDS]
"""
import os, random, sqlite3, sys, tempfile, time

def open_store(directory: str, rows: list) -> sqlite3.Connection:
    """The store's tables and pragmas in a new database in `directory`, `rows` in `event`."""
    db = sqlite3.connect(os.path.join(directory, "keys.db"), isolation_level=None)
    for pragma in ("journal_mode=WAL", "synchronous=NORMAL", "wal_autocheckpoint=0", "temp_store=MEMORY"):
        db.execute(f"PRAGMA {pragma}")
    db.execute("CREATE TABLE event(seq INTEGER PRIMARY KEY, kind INTEGER NOT NULL, app TEXT, donation TEXT, "
               "body BLOB NOT NULL)")
    db.execute("CREATE TABLE donation_key(app TEXT NOT NULL, donation TEXT NOT NULL, seq INTEGER NOT NULL, "
               "PRIMARY KEY (app, donation)) WITHOUT ROWID")
    db.execute("BEGIN")
    db.executemany("INSERT INTO event VALUES (?, ?, ?, ?, ?)", rows)
    db.execute("COMMIT")
    return db

def random_rows(n: int) -> list:
    """`n` donation rows over 10 apps with 128-bit random ids."""
    rnd = random.Random(1)
    return [(i + 1, 3, f"org.load.app{i % 10}", f"{rnd.getrandbits(128):032x}", b"x" * 60) for i in range(n)]

def copy_chunks(db: sqlite3.Connection, sql: str, n: int, chunk: int) -> float:
    """CPU seconds of running `sql` (bound to a chunk's sequence range) once per chunk, a transaction each."""
    began = time.process_time()
    for after in range(0, n, chunk):
        db.execute("BEGIN IMMEDIATE")
        db.execute(sql, (after, after + chunk))
        db.execute("COMMIT")
    return time.process_time() - began

def run(order: bool, n: int, chunk: int = 8192) -> float:
    with tempfile.TemporaryDirectory() as directory:
        db = open_store(directory, random_rows(n))
        sql = ("INSERT OR REPLACE INTO donation_key(app, donation, seq) SELECT app, donation, seq FROM event "
               "WHERE seq > ? AND seq <= ? AND donation IS NOT NULL" + (" ORDER BY app, donation, seq" if order else ""))
        spent = copy_chunks(db, sql, n, chunk)
        db.close()
        return spent

def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 400_000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    for _ in range(rounds):
        plain, ordered = run(False, n), run(True, n)
        print(f"{n} keys: unsorted {plain:.3f} s, sorted {ordered:.3f} s CPU ({ordered / plain:.2f}x)")

if __name__ == "__main__":
    main()
