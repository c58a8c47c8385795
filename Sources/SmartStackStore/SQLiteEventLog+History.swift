import GRDB
public import SmartStackCore

extension SQLiteEventLog {
    // MARK: The history of record, read back

    /// The latest snapshot and the log's counts, without its events (see ``StoredStart``).
    ///
    /// Called at start and after a failed commit, when nothing is being written; after a failure it lets the
    /// writer probe storage again. A damaged snapshot row is an error naming the file.
    public func loadStart() throws(StoreFailure) -> StoredStart {
        var start = StoredStart()
        do {
            try readerDatabase.read { db in
                start.snapshot = try Self.storedSnapshot(db)
                start.owners = try Self.owners(db)
                let range = try RawStatement(db, sql: "SELECT ifnull(max(seq), 0), count(*) FROM event")
                if try range.next() {
                    start.lastSequence = range.int64(0)
                    start.events = Int(range.int64(1))
                    _ = try range.next()
                }
                let tail = try loadKeyTail(db)
                var counts = tail.countsPerApp()
                // The rows after the tail's start are counted in the tail (a copy a stop interrupted may have written
                // some of them to the table too).
                let stored = try RawStatement(
                    db, sql: "SELECT app, count(*) FROM donation_key WHERE seq <= ? GROUP BY app")
                stored.bind(1, tail.through)
                while try stored.next() { counts[stored.text(0), default: 0] += Int(stored.int64(1)) }
                for (name, count) in counts {
                    guard let app = try? AppID(name) else {
                        throw StoreFailure(reason: "\(path): a donation row names the app \(name), not an app id")
                    }
                    start.donationsPerApp[app] = count
                }
            }
        } catch let failure as StoreFailure {
            throw failure
        } catch {
            throw StoreFailure(reason: "cannot read \(path): \(Self.describe(error))")
        }
        start.lastSequence = max(start.lastSequence, start.snapshot?.through ?? 0)
        reopened(
            lastSequence: start.lastSequence, snapshot: start.snapshot, events: start.events,
            donations: start.donationsPerApp.values.reduce(0, +))
        return start
    }

    /// After a load: numbering goes on after the stored records, a failed log may probe storage again, and the
    /// counters hold what is stored.
    func reopened(lastSequence: Int64, snapshot: StoredSnapshot?, events: Int, donations: Int) {
        let wasFailed = state.withLock { state -> Bool in
            state.nextSequence = lastSequence + 1
            state.snapshotThrough = snapshot?.through ?? 0
            guard case .failed(let failure, reloaded: false) = state.phase else { return false }
            state.phase = .failed(failure, reloaded: true)
            return true
        }
        if wasFailed { wake.signal() }
        counters.withLock { counters in
            counters.storedEvents = events
            counters.storedDonations = donations
            counters.lastSnapshot = snapshot?.taken
        }
    }

    public var lastSequence: Int64 { state.withLock { $0.nextSequence - 1 } }

    /// Reads the donation keys not yet in `donation_key` back from `event` into the writer's tail (at open and
    /// every load, when nothing is being written) and returns it.
    @discardableResult
    func loadKeyTail(_ db: Database) throws -> DonationKeyTail {
        let through =
            try Int64.fetchOne(
                db, sql: "SELECT value FROM meta WHERE key = '\(StoreSchema.donationKeysThrough)'") ?? 0
        let rows = try RawStatement(
            db, sql: "SELECT seq, app, donation FROM event WHERE seq > ? AND donation IS NOT NULL ORDER BY seq")
        rows.bind(1, through)
        var keys: [(app: String, id: String, sequence: Int64)] = []
        while try rows.next() { keys.append((app: rows.text(1), id: rows.text(2), sequence: rows.int64(0))) }
        return writer.keys.withLock { tail in
            tail.reset(through: through, keys: keys)
            return tail
        }
    }

    /// The row of a stored donation, found in the tail or in `donation_key`.
    private func sequence(app: AppID, id: String, _ db: Database) throws -> Int64? {
        if let sequence = writer.keys.withLock({ $0.sequence(app: app.rawValue, id: id) }) { return sequence }
        let position = try RawStatement(db, sql: "SELECT seq FROM donation_key WHERE app = ? AND donation = ?")
        position.bind(1, copying: app.rawValue)
        position.bind(2, copying: id)
        guard try position.next() else { return nil }
        let sequence = position.int64(0)
        _ = try position.next()
        return sequence
    }

    public func replay(after: Int64, through: Int64, _ body: (EngineEvent) -> Void) throws(StoreFailure) {
        try scan(sql: "SELECT seq, kind, body FROM event WHERE seq > ? AND seq <= ? ORDER BY seq") { rows in
            rows.bind(1, after)
            rows.bind(2, through)
        } each: { rows, recentApps throws(StoreFailure) in
            body(try decode(rows, recentApps: &recentApps))
        }
    }

    public func forEachDonation(app: AppID?, _ body: (Donation) -> Void) throws(StoreFailure) {
        let sql =
            app == nil
            ? "SELECT seq, kind, body FROM event WHERE donation IS NOT NULL ORDER BY seq"
            : "SELECT seq, kind, body FROM event WHERE app = ? AND donation IS NOT NULL ORDER BY seq"
        try scan(sql: sql) { rows in
            if let app { rows.bind(1, copying: app.rawValue) }
        } each: { rows, recentApps throws(StoreFailure) in
            if let donation = try decode(rows, recentApps: &recentApps).donation { body(donation) }
        }
    }

    public func forEachDonationKey(_ body: (String, String) -> Void) throws(StoreFailure) {
        // The tail first: a key flushed while the table is read is then seen twice, never missed.
        let tail = writer.keys.withLock { $0 }
        for key in tail.sequences.keys { body(key.app, key.id) }
        try scan(sql: "SELECT app, donation FROM donation_key") { _ in
        } each: { rows, _ in
            body(rows.text(0), rows.text(1))
        }
    }

    public func donation(app: AppID, id: String) throws(StoreFailure) -> Donation? {
        try query { db throws in
            guard let sequence = try sequence(app: app, id: id, db) else { return nil }
            let rows = try RawStatement(db, sql: "SELECT seq, kind, body FROM event WHERE seq = ?")
            rows.bind(1, sequence)
            var recentApps: [AppID] = []
            guard try rows.next() else { return nil }
            let event = try decode(rows, recentApps: &recentApps)
            _ = try rows.next()
            return event.donation
        }
    }

    /// A page: the id of `.after` is found through the index, then the rows after it are read in sequence order,
    /// keeping the app's (a scan that stops once the page is full; on a connection of its own, so call it off the
    /// engine's loop).
    public func donations(app: AppID, from start: DonationPageStart, limit: Int) throws(StoreFailure)
        -> DonationPage?
    {
        let from = try start.sequence { id throws(StoreFailure) in
            try query { db throws -> Int64? in try sequence(app: app, id: id, db) }
        }
        guard let from else { return nil }
        var page = DonationPage(donations: [], through: from)
        guard limit > 0 else { return page }
        try scan(
            sql:
                "SELECT seq, kind, body FROM event WHERE seq > ? AND app = ? AND donation IS NOT NULL ORDER BY seq LIMIT ?"
        ) { rows in
            rows.bind(1, from)
            rows.bind(2, copying: app.rawValue)
            rows.bind(3, Int64(limit))
        } each: { rows, recentApps throws(StoreFailure) in
            if let donation = try decode(rows, recentApps: &recentApps).donation {
                page.donations.append(donation)
                page.through = rows.int64(0)
            }
        }
        return page
    }

    // MARK: Reading helpers

    /// Runs a short query on the connection kept for them: point lookups (on the engine's loop, when the id filter
    /// cannot answer) and pages (`ListDonations`, run off the loop).
    private func query<T>(_ body: (Database) throws -> T) throws(StoreFailure) -> T {
        do {
            return try queryDatabase.read { db in try body(db) }
        } catch let failure as StoreFailure {
            throw failure
        } catch {
            throw StoreFailure(reason: "cannot read \(path): \(Self.describe(error))")
        }
    }

    /// Runs a long read on a connection of its own (so it runs beside the writer, the loop's lookups and other
    /// scans), calling `each` per row.
    private func scan(
        sql: String, bind: (RawStatement) -> Void,
        each: (RawStatement, inout [AppID]) throws(StoreFailure) -> Void
    ) throws(StoreFailure) {
        do {
            var configuration = Configuration()
            configuration.readonly = true
            configuration.label = "smartstackd.store.scan"
            configuration.busyMode = .timeout(10)
            let database = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? database.close() }
            try database.read { db in
                let rows = try RawStatement(db, sql: sql)
                bind(rows)
                var recentApps: [AppID] = []
                while try rows.next() { try each(rows, &recentApps) }
            }
        } catch let failure as StoreFailure {
            throw failure
        } catch {
            throw StoreFailure(reason: "cannot read \(path): \(Self.describe(error))")
        }
    }

    /// The event in the current row of `SELECT seq, kind, body`.
    private func decode(_ rows: RawStatement, recentApps: inout [AppID]) throws(StoreFailure) -> EngineEvent {
        let sequence = rows.int64(0)
        let kind = rows.int64(1)
        do throws(CodecError) {
            guard kind == StoreSchema.eventKind else { throw CodecError("unknown record kind \(kind)") }
            return try EngineEvent(decoding: rows.blob(2), recentApps: &recentApps)
        } catch {
            throw StoreFailure(reason: "\(path): record \(sequence) cannot be read: \(error)")
        }
    }

    static func storedSnapshot(_ db: Database) throws -> StoredSnapshot? {
        let snapshot = try RawStatement(db, sql: "SELECT through, taken, takenOffset, body FROM snapshot WHERE id = 1")
        guard try snapshot.next() else { return nil }
        let taken = Timestamp(
            microseconds: snapshot.int64(1), utcOffsetSeconds: Int32(truncatingIfNeeded: snapshot.int64(2)))
        let stored = StoredSnapshot(through: snapshot.int64(0), taken: taken, bytes: Array(snapshot.blob(3)))
        _ = try snapshot.next()
        return stored
    }

    static func owners(_ db: Database) throws -> [AppID: UInt32] {
        var owners: [AppID: UInt32] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT app, uid FROM app_owner") {
            let name: String = row["app"]
            guard let app = try? AppID(name), let uid = UInt32(exactly: row["uid"] as Int64) else {
                throw StoreFailure(reason: "the app_owner row for \(name) is damaged")
            }
            owners[app] = uid
        }
        return owners
    }
}
