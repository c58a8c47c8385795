import GRDB
import GRDBSQLite
import SmartStackCore
import Synchronization

/// The writer thread's prepared statements and scratch space; used only on that thread, inside GRDB's closure
/// (but for `keys`, which lookups read under its lock).
final class StoreWriter: @unchecked Sendable {
    let path: String
    /// The committed donation keys not yet in `donation_key`.
    let keys = Mutex(DonationKeyTail())
    private var insert: RawStatement?
    private var keyCopyAll: RawStatement?
    private var keySort: RawStatement?
    private var keySlice: RawStatement?
    /// The chunk of donation keys being copied to `donation_key`, a slice per transaction.
    var keyCopy: DonationKeyCopy?
    /// Set when copying a slice failed: no copy until a commit succeeds (a failing store is not retried in a loop).
    var keyCopyFailed = false
    /// Set while a failed log waits for free space before its test write (the first wait is logged as a warning).
    var waitingForSpace = false
    private var keysThrough: RawStatement?
    private var doom: RawStatement?
    private var claim: RawStatement?
    private var release: RawStatement?
    private var buffer = ByteWriter(capacity: 512)
    var recordsSinceCheckpoint = 0
    var bytesSinceCheckpoint = 0
    /// When a truncating checkpoint was last asked for (monotonic nanoseconds).
    var lastTruncateAttempt: UInt64 = 0

    private var begin: RawStatement?
    private var commit: RawStatement?

    init(path: String) { self.path = path }

    /// The statement kept in `slot`, prepared from `sql` on first use.
    private func prepared(_ slot: ReferenceWritableKeyPath<StoreWriter, RawStatement?>, _ sql: String, _ db: Database)
        throws -> RawStatement
    {
        if let statement = self[keyPath: slot] { return statement }
        let statement = try RawStatement(db, sql: sql)
        self[keyPath: slot] = statement
        return statement
    }

    /// Runs `body` in an immediate transaction through prepared `BEGIN` and `COMMIT` statements (GRDB's
    /// `inTransaction` builds and parses both per commit); rolls back when `body` or the commit fails.
    func transaction(_ db: Database, _ body: () throws -> Void) throws {
        let begin = try prepared(\.begin, "BEGIN IMMEDIATE", db)
        let commit = try prepared(\.commit, "COMMIT", db)
        try begin.run()
        do {
            try body()
            try commit.run()
        } catch {
            if db.isInsideTransaction { try? db.execute(sql: "ROLLBACK") }
            throw error
        }
    }

    /// Writes a batch inside the caller's transaction.
    func write(_ batch: Batch, _ db: Database, into result: inout CommitResult) throws {
        let insert = try prepared(
            \.insert, "INSERT INTO event(seq, kind, app, donation, body) VALUES (?, ?, ?, ?, ?)", db)
        var snapshotThrough = batch.snapshotThrough
        for item in batch.items {
            switch item {
            case .record(let sequence, let event):
                try write(sequence, event, insert, into: &result)
            case .delete(let donations, let engine, let through):
                // Deletion finds rows through `donation_key`: every key stored so far goes there first (a copy under
                // way is then done, and must not write the deleted keys back).
                keyCopy = nil
                let after = result.keysFlushedThrough ?? keys.withLock { $0.through }
                result.keysFlushedThrough = try flushKeys(after: after, db)
                result.newKeys = []
                result.deletedEvents += try delete(donations, db)
                let snapshot = StoredSnapshot(through: through, taken: Wallclock.now(), bytes: engine.snapshot())
                try store(snapshot, db)
                snapshotThrough = max(snapshotThrough, through)
                result.snapshot = snapshot
            case .owner(let app, let uid):
                try run(prepared(\.claim, "INSERT OR IGNORE INTO app_owner(app, uid) VALUES (?, ?)", db), app, uid)
            case .ownerReleased(let app, let uid):
                try run(prepared(\.release, "DELETE FROM app_owner WHERE app = ? AND uid = ?", db), app, uid)
            case .snapshot(let snapshot):
                // A snapshot taken before a later deletion's snapshot must not replace it.
                guard snapshot.through > snapshotThrough else { continue }
                try store(snapshot, db)
                snapshotThrough = snapshot.through
                result.snapshot = snapshot
            }
        }
    }

    /// Runs an `app_owner` statement bound to an app and a uid.
    private func run(_ statement: RawStatement, _ app: AppID, _ uid: UInt32) throws {
        var text = app.rawValue
        try text.withUTF8 { text in
            statement.bind(1, text: text)
            statement.bind(2, Int64(uid))
            try statement.run()
        }
    }

    private func write(_ sequence: Int64, _ event: EngineEvent, _ insert: RawStatement, into result: inout CommitResult)
        throws
    {
        buffer.reset()
        event.encode(into: &buffer)
        insert.bind(1, sequence)
        insert.bind(2, StoreSchema.eventKind)
        if let donation = event.donation {
            var app = donation.app.rawValue
            var id = donation.id
            try app.withUTF8 { app in
                try id.withUTF8 { id in
                    insert.bind(3, text: app)
                    insert.bind(4, text: id)
                    try runInsert(insert)
                }
            }
            result.newKeys.append((app: app, id: id, sequence: sequence))
            result.insertedDonations += 1
        } else {
            insert.bindNull(3)
            insert.bindNull(4)
            try runInsert(insert)
        }
        result.insertedEvents += 1
        result.insertedBytes += buffer.bytes.count
    }

    private func runInsert(_ insert: RawStatement) throws {
        try buffer.bytes.withUnsafeBytes { body in
            insert.bind(5, blob: body)
            try insert.run()
        }
    }

    /// Copies the keys of every donation row after `after` (this transaction's rows so far included) from `event`
    /// into `donation_key` in one statement, and records the last sequence number they cover; returns it. Inside
    /// the caller's transaction. (The rows are recent: their pages are in SQLite's cache.)
    func flushKeys(after: Int64, _ db: Database) throws -> Int64 {
        let copy = try prepared(
            \.keyCopyAll,
            """
            INSERT OR REPLACE INTO donation_key(app, donation, seq)
                SELECT app, donation, seq FROM event WHERE seq > ? AND donation IS NOT NULL
                ORDER BY app, donation, seq
            """, db)
        copy.bind(1, after)
        try copy.run()
        let through = max(after, try Int64.fetchOne(db, sql: "SELECT ifnull(max(seq), 0) FROM event") ?? 0)
        try recordKeysThrough(through, db)
        return through
    }

    /// Writes the next `slice` keys of `copy` to `donation_key`, first sorting the chunk's keys into the temporary
    /// table `key_chunk` when this is its first slice; the last slice records `donationKeysThrough`. In the caller's
    /// transaction.
    func copyKeys(_ copy: inout DonationKeyCopy, slice: Int, _ db: Database) throws {
        if copy.count == nil {
            try db.execute(
                sql: """
                    CREATE TEMP TABLE IF NOT EXISTS key_chunk (app TEXT NOT NULL, donation TEXT NOT NULL, seq INTEGER);
                    DELETE FROM temp.key_chunk;
                    """)
            let sort = try prepared(
                \.keySort,
                """
                INSERT INTO temp.key_chunk(rowid, app, donation, seq)
                    SELECT NULL, app, donation, seq FROM event WHERE seq > ? AND seq <= ? AND donation IS NOT NULL
                    ORDER BY app, donation, seq
                """, db)
            sort.bind(1, copy.after)
            sort.bind(2, copy.through)
            copy.count = try sort.run()
        }
        let slices = try prepared(
            \.keySlice,
            """
            INSERT OR REPLACE INTO donation_key(app, donation, seq)
                SELECT app, donation, seq FROM temp.key_chunk WHERE rowid > ? AND rowid <= ? ORDER BY rowid
            """, db)
        let end = min(copy.count ?? 0, copy.next + slice)
        slices.bind(1, Int64(copy.next))
        slices.bind(2, Int64(end))
        try slices.run()
        copy.next = end
        if copy.isFinished {
            try recordKeysThrough(copy.through, db)
            try db.execute(sql: "DELETE FROM temp.key_chunk")
        }
    }

    /// Records that every donation key up to `through` is in `donation_key` (in the caller's transaction).
    func recordKeysThrough(_ through: Int64, _ db: Database) throws {
        let keysThrough = try prepared(
            \.keysThrough, "INSERT OR REPLACE INTO meta(key, value) VALUES ('\(StoreSchema.donationKeysThrough)', ?)",
            db)
        keysThrough.bind(1, through)
        try keysThrough.run()
    }

    /// Deletes donation rows by app and id, found through `donation_key` (a temporary table holds the ids); the
    /// caller wrote every stored key there first.
    private func delete(_ donations: [(app: AppID, id: String)], _ db: Database) throws -> Int {
        guard !donations.isEmpty else { return 0 }
        try db.execute(
            sql: """
                CREATE TEMP TABLE IF NOT EXISTS doomed (app TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (app, id))
                    WITHOUT ROWID;
                DELETE FROM temp.doomed;
                """)
        let doom = try prepared(\.doom, "INSERT OR IGNORE INTO temp.doomed(app, id) VALUES (?, ?)", db)
        for (app, id) in donations {
            var appText = app.rawValue
            var idText = id
            try appText.withUTF8 { app in
                try idText.withUTF8 { id in
                    doom.bind(1, text: app)
                    doom.bind(2, text: id)
                    try doom.run()
                }
            }
        }
        try db.execute(
            sql: """
                DELETE FROM event WHERE seq IN (
                    SELECT k.seq FROM temp.doomed AS d JOIN donation_key AS k ON k.app = d.app AND k.donation = d.id)
                """)
        let deleted = db.changesCount
        try db.execute(
            sql: "DELETE FROM donation_key WHERE (app, donation) IN (SELECT app, id FROM temp.doomed)")
        try db.execute(sql: "DELETE FROM temp.doomed")
        return deleted
    }

    private func store(_ snapshot: StoredSnapshot, _ db: Database) throws {
        let statement = try RawStatement(
            db, sql: "INSERT OR REPLACE INTO snapshot(id, through, taken, takenOffset, body) VALUES (1, ?, ?, ?, ?)")
        statement.bind(1, snapshot.through)
        statement.bind(2, snapshot.taken.microseconds)
        statement.bind(3, Int64(snapshot.taken.utcOffsetSeconds))
        try snapshot.bytes.withUnsafeBytes { body in
            statement.bind(4, blob: body)
            try statement.run()
        }
    }
}
