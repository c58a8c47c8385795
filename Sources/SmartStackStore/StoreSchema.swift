import GRDB

/// The database's schema and its migrations, from the first version on.
///
/// `event` holds the log in order: every engine event (publish marks included), one row each, keyed by its
/// sequence number. Donation rows also carry their app and id; `donation_key` (v5) maps each donation's app and id
/// to its row, written in large batches (``DonationKeyTail``), so a donation is found by its id without the
/// service keeping them in memory and without each commit writing a page of an index per donation. `snapshot` holds one
/// row: the engine's state and the last sequence number it includes. `meta` records the layout of event bodies.
/// `app_owner` keeps which uid an app id belongs to when the access policy gives it to the first uid that acts for it.
/// Migrations are GRDB's (`grdb_migrations` lists the applied ones); `user_version` mirrors the latest, so a
/// newer database is recognised by either.
enum StoreSchema {
    /// `PRAGMA application_id`: "SMST", marking the file as smartstackd's.
    static let applicationID: Int32 = 0x534D_5354
    /// The schema version this build writes (`PRAGMA user_version`).
    static let version = 5
    /// The database file's name in the state directory.
    static let fileName = "smartstack.sqlite"

    /// The layout of event bodies this build reads and writes (``EngineEvent/encode(into:)``).
    static let eventFormat = 1

    /// `event.kind` of an engine event in ``EngineEvent/encode(into:)``'s layout (the only kind so far; another
    /// layout or record type would take another number).
    static let eventKind: Int64 = 1

    /// Every migration, oldest first.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE event (
                        seq INTEGER PRIMARY KEY,
                        kind INTEGER NOT NULL,
                        app TEXT,
                        donation TEXT,
                        body BLOB NOT NULL
                    );
                    CREATE TABLE snapshot (
                        id INTEGER PRIMARY KEY CHECK (id = 1),
                        through INTEGER NOT NULL,
                        taken INTEGER NOT NULL,
                        takenOffset INTEGER NOT NULL,
                        body BLOB NOT NULL
                    );
                    PRAGMA application_id = \(applicationID);
                    PRAGMA user_version = 1;
                    """)
        }
        // v2: the layout of event bodies is recorded, so a build that does not know it refuses the file instead
        // of misreading it (v1 files hold layout 1).
        migrator.registerMigration("v2") { db in
            try db.execute(
                sql: """
                    CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
                    INSERT INTO meta(key, value) VALUES ('eventFormat', \(eventFormat));
                    PRAGMA user_version = 2;
                    """)
        }
        // v3: app ids claimed by their first uid (the system service's access policy) survive restarts.
        migrator.registerMigration("v3") { db in
            try db.execute(
                sql: """
                    CREATE TABLE app_owner (app TEXT PRIMARY KEY, uid INTEGER NOT NULL) WITHOUT ROWID;
                    PRAGMA user_version = 3;
                    """)
        }
        // v4: the store is the history of record (the service keeps no copy of it in memory): a donation is found
        // by app and id (a retried call whose id the in-memory filter may know, `after` of a page). One index
        // only: each costs every append a random page write (measured: durable Donate 50 x 1 at ~0.7x of no index
        // with this one, ~0.55x with a second one on `app` for listing, which scans by sequence number instead).
        migrator.registerMigration("v4") { db in
            try db.execute(
                sql: """
                    CREATE INDEX event_donation ON event(app, donation) WHERE donation IS NOT NULL;
                    PRAGMA user_version = 4;
                    """)
        }
        // v5: donation ids are found through `donation_key`, written in large batches by the writer, instead
        // of an index on `event` that every commit updated per donation (a commit of 50 donations from 50 clients
        // wrote up to 50 index leaves, 4 KiB each, to the write-ahead log). The keys of rows after
        // `donationKeysThrough` are not in the table yet: the log keeps them in memory and reads them back from
        // `event` at start.
        migrator.registerMigration("v5") { db in
            try db.execute(
                sql: """
                    CREATE TABLE donation_key (
                        app TEXT NOT NULL,
                        donation TEXT NOT NULL,
                        seq INTEGER NOT NULL,
                        PRIMARY KEY (app, donation)
                    ) WITHOUT ROWID;
                    INSERT OR REPLACE INTO donation_key(app, donation, seq)
                        SELECT app, donation, seq FROM event WHERE donation IS NOT NULL ORDER BY app, donation;
                    DROP INDEX event_donation;
                    INSERT OR REPLACE INTO meta(key, value)
                        VALUES ('\(donationKeysThrough)', (SELECT ifnull(max(seq), 0) FROM event));
                    PRAGMA user_version = 5;
                    """)
        }
        return migrator
    }

    /// The `meta` key of the last sequence number whose donation key is in `donation_key` (every later donation's
    /// key is in the log's memory, read back from `event` at start).
    static let donationKeysThrough = "donationKeysThrough"

    /// Checks, without writing anything, that `db` is a database this build can use: empty, or smartstackd's
    /// with a schema no newer than this build's.
    static func check(_ db: Database, path: String) throws(StoreOpenError) {
        let applicationID: Int32
        let userVersion: Int
        let applied: [String]
        do {
            applicationID = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
            userVersion = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
            let hasMigrations =
                try Bool.fetchOne(
                    db, sql: "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'grdb_migrations'")
                ?? false
            applied = hasMigrations ? try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations") : []
            let tables = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") ?? 0
            if applicationID == 0, tables > 0, applied.isEmpty {
                throw StoreOpenError(
                    .unreadable, path: path,
                    reason: "not a smartstackd database (it has tables but no smartstackd application id); not touched")
            }
        } catch let error as StoreOpenError {
            throw error
        } catch {
            throw StoreOpenError.reading(path: path, error)
        }
        if applicationID != 0, applicationID != Self.applicationID {
            throw StoreOpenError(
                .unreadable, path: path,
                reason: "not a smartstackd database (application id \(applicationID)); not touched")
        }
        if applied.contains("v2") {
            let format: Int?
            do { format = try Int.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'eventFormat'") } catch {
                throw StoreOpenError.reading(path: path, error)
            }
            if let format, format > eventFormat {
                throw StoreOpenError(
                    .newerSchema, path: path,
                    reason: "written by a newer smartstackd: event format \(format), this build reads up to "
                        + "\(eventFormat); not touched — run the newer version or restore a backup")
            }
        }
        let known = Set(migrator.migrations)
        let unknown = applied.filter { !known.contains($0) }
        if userVersion > version || !unknown.isEmpty {
            let detail = unknown.isEmpty ? "" : " (migrations \(unknown.sorted().joined(separator: ", ")))"
            throw StoreOpenError(
                .newerSchema, path: path,
                reason:
                    "written by a newer smartstackd: schema version \(userVersion)\(detail), this build knows up to "
                    + "\(version); not touched — run the newer version or restore a backup")
        }
    }
}

extension StoreOpenError {
    /// The error for a failure reading the file: damage is `.unreadable`, anything else `.failed`.
    static func reading(path: String, _ error: any Error) -> StoreOpenError {
        if let database = error as? DatabaseError {
            switch database.resultCode {
            case .SQLITE_CORRUPT, .SQLITE_NOTADB:
                return StoreOpenError(
                    .unreadable, path: path,
                    reason: "damaged or not a database (\(database.message ?? "\(database.resultCode)")); not touched")
            case .SQLITE_READONLY, .SQLITE_CANTOPEN, .SQLITE_PERM:
                return StoreOpenError(
                    .notWritable, path: path,
                    reason: "cannot be opened for writing (\(database.message ?? "\(database.resultCode)"))")
            case .SQLITE_BUSY, .SQLITE_LOCKED:
                return StoreOpenError(.locked, path: path, reason: "locked by another process")
            default:
                break
            }
            return StoreOpenError(.failed, path: path, reason: database.message ?? "\(database.resultCode)")
        }
        return StoreOpenError(.failed, path: path, reason: "\(error)")
    }
}
