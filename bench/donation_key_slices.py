#!/usr/bin/env python3
"""What slicing the donation-key copy costs in CPU (docs/storage.md, "The copy is sliced").

SQLite alone, the store's tables and statements: N donation rows, then their keys copied into `donation_key` in chunks
of 8,192 keys, either as one `INSERT ... SELECT ... ORDER BY` per chunk (the copy until the fourteenth session) or as
the writer copies them now: the chunk sorted into a temporary table in memory, then SLICE keys per transaction. CPU
time of the copies, alternating, ROUNDS rounds. IDS is `load` (smartstack-load's ids: a run per client, 50 clients)
or `uuid` (128-bit random ids).

    python3 bench/donation_key_slices.py [N] [IDS] [SLICE] [ROUNDS]
"""
import sys, tempfile, time

from donation_key_order import copy_chunks, open_store, random_rows

WHOLE = ("INSERT OR REPLACE INTO donation_key(app, donation, seq) SELECT app, donation, seq FROM event "
         "WHERE seq > ? AND seq <= ? AND donation IS NOT NULL ORDER BY app, donation, seq")
SORT = ("INSERT INTO temp.key_chunk(rowid, app, donation, seq) SELECT NULL, app, donation, seq FROM event "
        "WHERE seq > ? AND seq <= ? AND donation IS NOT NULL ORDER BY app, donation, seq")
SLICE = ("INSERT OR REPLACE INTO donation_key(app, donation, seq) SELECT app, donation, seq FROM temp.key_chunk "
         "WHERE rowid > ? AND rowid <= ? ORDER BY rowid")


def run(sliced: bool, n: int, ids: str, slice_size: int, chunk: int = 8192) -> float:
    with tempfile.TemporaryDirectory() as directory:
        rows = random_rows(n) if ids == "uuid" else [
            (i + 1, 3, "org.load.app", f"c{i % 50}-{i // 50}", b"x" * 60) for i in range(n)]
        db = open_store(directory, rows)
        db.execute("CREATE TEMP TABLE key_chunk (app TEXT NOT NULL, donation TEXT NOT NULL, seq INTEGER)")
        if not sliced:
            spent = copy_chunks(db, WHOLE, n, chunk)
            db.close()
            return spent
        began = time.process_time()
        for after in range(0, n, chunk):
            db.execute("BEGIN IMMEDIATE")
            db.execute("DELETE FROM temp.key_chunk")
            count = db.execute(SORT, (after, after + chunk)).rowcount
            for start in range(0, count, slice_size):
                if start > 0:
                    db.execute("BEGIN IMMEDIATE")
                db.execute(SLICE, (start, start + slice_size))
                db.execute("COMMIT")
        spent = time.process_time() - began
        db.close()
        return spent


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 400_000
    ids = sys.argv[2] if len(sys.argv) > 2 else "load"
    slice_size = int(sys.argv[3]) if len(sys.argv) > 3 else 256
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    for _ in range(rounds):
        whole, sliced = run(False, n, ids, slice_size), run(True, n, ids, slice_size)
        print(f"{n} {ids} keys: one statement per chunk {whole:.3f} s, slices of {slice_size} {sliced:.3f} s CPU "
              f"({sliced / whole:.2f}x)")


if __name__ == "__main__":
    main()
