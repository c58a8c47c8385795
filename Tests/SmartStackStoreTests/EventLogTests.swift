import Foundation
import GRDB
import SmartStackCore
import SmartStackStore
import Synchronization
import Testing

@Suite("SQLite event log", .timeLimit(.minutes(2)))
struct EventLogTests {
    typealias S = StoreFixture

    @Test("events, publish marks, deletions and snapshots read back in order after reopening")
    func roundTrip() async throws {
        let directory = try TemporaryDirectory()
        let log = try S.open(directory)
        #expect(try log.load().events.isEmpty)
        let events: [EngineEvent] = [
            .registerKind(S.kind("mail"), at: S.t(0)),
            S.donation("mail", id: "a", at: 1),
            S.donation("mail", id: "b", at: 2, group: "g"),
            .setContext(key: "focus", value: "work", at: S.t(3)),
        ]
        try await log.enqueue(Array(events[0..<2])).committed()
        try await log.enqueue([.publish(at: S.t(2.5))]).committed()
        try await log.enqueue(Array(events[2...])).committed()
        try await log.delete(donations: [(S.app("mail"), "a")], engine: Engine()).committed()
        try await log.enqueue([S.donation("mail", id: "a", at: 5)]).committed()
        let statistics = try #require(log.statistics())
        #expect(statistics.storedEvents == 5)
        #expect(statistics.storedDonations == 2)
        #expect(statistics.commits == 5)
        #expect(statistics.latency?.samples == 5)
        #expect(statistics.databaseBytes > 0)
        await log.close()

        let reopened = try S.open(directory)
        let history = try reopened.load()
        // Sequence numbers: kind 1, donation a 2 (deleted), publish mark 3, b 4, context 5, a again 6.
        #expect(history.sequences == [1, 3, 4, 5, 6])
        #expect(
            history.events == [
                events[0], .publish(at: S.t(2.5)), events[2], events[3], S.donation("mail", id: "a", at: 5),
            ])
        // The deletion stored the engine's state as of everything before it.
        #expect(history.snapshot?.through == 5)
        // The next record continues after the highest sequence number, deleted rows included.
        try await reopened.enqueue([S.donation("mail", id: "c", at: 6)]).committed()
        #expect(try reopened.load().sequences.last == 7)
        await reopened.close()
    }

    @Test(
        "donation ids are found before and after their keys are written in a batch, after reopening, and deleted from both"
    )
    func donationKeyBatches() async throws {
        let directory = try TemporaryDirectory()
        var options = StoreOptions()
        options.donationKeyBatch = 5
        options.donationKeyChunk = 5
        let log = try S.open(directory, options: options)
        // Twelve commits of one donation each: the keys of the first ten go to the table in two chunks of five
        // (whenever the writer has nothing to commit), the last two stay in memory.
        for index in 0..<12 {
            try await log.enqueue([
                S.donation(index.isMultiple(of: 2) ? "mail" : "news", id: "d\(index)", at: Double(index))
            ])
            .committed()
        }
        func tableState(_ directory: TemporaryDirectory) throws -> (keys: Int, through: Int64?) {
            let (keys, through) = try Self.donationKeyTable(directory)
            return (keys.count, through)
        }
        #expect(try await Self.settled { try tableState(directory) == (10, 10) })
        for index in 0..<12 {
            let app = S.app(index.isMultiple(of: 2) ? "mail" : "news")
            #expect(try log.donation(app: app, id: "d\(index)")?.id == "d\(index)", "d\(index) before reopening")
        }
        #expect(try log.donation(app: S.app("news"), id: "d0") == nil, "an id is found under its own app only")
        await log.close()

        let reopened = try S.open(directory, options: options)
        let start = try reopened.loadStart()
        #expect(start.donationsPerApp == [S.app("mail"): 6, S.app("news"): 6])
        for index in 0..<12 {
            let app = S.app(index.isMultiple(of: 2) ? "mail" : "news")
            #expect(try reopened.donation(app: app, id: "d\(index)")?.id == "d\(index)", "d\(index) after reopening")
        }
        // A page after an id whose key is in the table, and after one still in memory.
        #expect(
            try reopened.donations(app: S.app("mail"), from: .after(id: "d6"), limit: 10)?.donations.map(\.id) == [
                "d8", "d10",
            ])
        #expect(try reopened.donations(app: S.app("mail"), from: .after(id: "d10"), limit: 10)?.donations == [])
        // Deleting one donation whose key is in the table and one whose key is in memory: both rows go, every
        // key is then in the table, and the ids are free again.
        try await reopened.delete(donations: [(S.app("mail"), "d2"), (S.app("mail"), "d10")], engine: Engine())
            .committed()
        #expect(try reopened.donation(app: S.app("mail"), id: "d2") == nil)
        #expect(try reopened.donation(app: S.app("mail"), id: "d10") == nil)
        #expect(try reopened.donation(app: S.app("news"), id: "d11")?.id == "d11")
        #expect(try tableState(directory) == (10, 12))
        var keys: [String] = []
        try reopened.forEachDonationKey { app, id in keys.append("\(app)/\(id)") }
        #expect(keys.count == 10)
        #expect(!keys.contains("com.example.mail/d2") && !keys.contains("com.example.mail/d10"))
        #expect(try reopened.load().events.count == 10)
        try await reopened.enqueue([S.donation("mail", id: "d2", at: 20)]).committed()
        #expect(try reopened.donation(app: S.app("mail"), id: "d2")?.date == S.t(20))
        await reopened.close()
    }

    @Test("donation keys are copied the oldest chunk at a time once a batch waits; a deletion copies the rest first")
    func donationKeyChunks() async throws {
        let directory = try TemporaryDirectory()
        var options = StoreOptions()
        options.donationKeyBatch = 6
        options.donationKeyChunk = 2
        let log = try S.open(directory, options: options)
        func tableState() throws -> (keys: [String], through: Int64?) { try Self.donationKeyTable(directory) }
        // Whenever six keys wait and the writer has nothing to commit, it copies the oldest two: after the sixth
        // commit, the ninth and the tenth.
        for index in 0..<10 {
            try await log.enqueue([S.donation("mail", id: "d\(index)", at: Double(index))]).committed()
            if index == 6 { #expect(try await Self.settled { try tableState() == (["d0", "d1"], 2) }) }
            if index == 8 { #expect(try await Self.settled { try tableState() == (["d0", "d1", "d2", "d3"], 4) }) }
        }
        #expect(try await Self.settled { try tableState() == (["d0", "d1", "d2", "d3", "d4", "d5"], 6) })
        await log.close()
        #expect(try tableState() == (["d0", "d1", "d2", "d3", "d4", "d5"], 6))
        let reopened = try S.open(directory, options: options)
        _ = try reopened.loadStart()
        for index in 0..<10 {
            #expect(try reopened.donation(app: S.app("mail"), id: "d\(index)")?.id == "d\(index)")
        }
        try await reopened.delete(donations: [(S.app("mail"), "d0"), (S.app("mail"), "d9")], engine: Engine())
            .committed()
        #expect(try tableState() == (["d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8"], 10))
        #expect(try reopened.donation(app: S.app("mail"), id: "d9") == nil)
        #expect(try reopened.donation(app: S.app("mail"), id: "d8")?.id == "d8")
        await reopened.close()
    }

    @Test(
        "a chunk is copied in key order, a slice per transaction; a copy cut short is counted once and finished after reopening"
    )
    func donationKeySlices() async throws {
        let directory = try TemporaryDirectory()
        var options = StoreOptions()
        options.donationKeyBatch = 8
        options.donationKeyChunk = 8
        options.donationKeySlice = 3
        let log = try S.open(directory, options: options)
        // Ids out of key order, two apps: the chunk goes to the table in three slices of at most three keys.
        let ids = ["k5", "k1", "k7", "k3", "k0", "k6", "k2", "k4"]
        for (index, id) in ids.enumerated() {
            try await log.enqueue([S.donation(index < 4 ? "mail" : "news", id: id, at: Double(index))]).committed()
        }
        #expect(try await Self.settled { try Self.donationKeyTable(directory).through == 8 })
        #expect(try Self.donationKeyTable(directory).keys.sorted() == ids.sorted())
        await log.close()

        // A copy cut short by a stop: two slices of the next chunk in the table, `donationKeysThrough` not moved.
        let reopened = try S.open(directory, options: options)
        _ = try reopened.loadStart()
        for index in 0..<5 {
            try await reopened.enqueue([S.donation("mail", id: "n\(index)", at: Double(10 + index))]).committed()
        }
        await reopened.close()
        let queue = try DatabaseQueue(path: directory.database)
        try await queue.write { db in
            try db.execute(sql: "INSERT INTO donation_key(app, donation, seq) VALUES ('com.example.mail', 'n0', 9)")
            try db.execute(sql: "INSERT INTO donation_key(app, donation, seq) VALUES ('com.example.mail', 'n1', 10)")
        }
        try queue.close()
        var more = options
        more.donationKeyBatch = 5
        more.donationKeyChunk = 5
        let again = try S.open(directory, options: more)
        let start = try again.loadStart()
        #expect(start.donationsPerApp == [S.app("mail"): 9, S.app("news"): 4], "each donation counted once")
        for index in 0..<5 { #expect(try again.donation(app: S.app("mail"), id: "n\(index)")?.id == "n\(index)") }
        // The five keys waiting since the stop are copied again (the two already there replaced by themselves); the
        // sixth stays in memory.
        try await again.enqueue([S.donation("news", id: "n5", at: 20)]).committed()
        #expect(try await Self.settled { try Self.donationKeyTable(directory).through == 13 })
        #expect(try Self.donationKeyTable(directory).keys.count == 13)
        await again.close()
        let last = try S.open(directory, options: options)
        #expect(try last.loadStart().donationsPerApp == [S.app("mail"): 9, S.app("news"): 5])
        await last.close()
    }

    /// Whether `condition` holds within ten seconds (the writer copies donation keys when it has nothing to commit,
    /// after the calls that made them were acknowledged).
    static func settled(_ condition: () throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if try condition() { return true }
            try await Task.sleep(for: .milliseconds(5))
        }
        return try condition()
    }

    /// The ids in `donation_key` (by row) and `donationKeysThrough`, read from the file on a connection of its own.
    static func donationKeyTable(_ directory: TemporaryDirectory) throws -> (keys: [String], through: Int64?) {
        let queue = try DatabaseQueue(path: directory.database)
        defer { try? queue.close() }
        return try queue.read { db in
            (
                try String.fetchAll(db, sql: "SELECT donation FROM donation_key ORDER BY seq"),
                try Int64.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'donationKeysThrough'")
            )
        }
    }

    @Test("concurrent calls share transactions: fewer commits than calls, every call stored once")
    func groupCommit() async throws {
        let directory = try TemporaryDirectory()
        let log = try S.open(directory)
        let clients = 50
        let perClient = 200
        try await EnqueueOrder(log).donate(clients: clients, each: perClient, prefix: "c")
        let statistics = try #require(log.statistics())
        #expect(statistics.committedCalls == clients * perClient)
        #expect(statistics.storedDonations == clients * perClient)
        #expect(statistics.commits < clients * perClient / 2, "commits: \(statistics.commits)")
        let stored = try log.load()
        #expect(stored.events.count == clients * perClient)
        #expect(Set(stored.sequences).count == stored.sequences.count)
        #expect(Set(stored.events).count == stored.events.count)
        await log.close()
    }

    @Test(
        "under a steady stream of commits the write-ahead log starts again after each checkpoint: its file stays small")
    func writeAheadLogRestarts() async throws {
        let directory = try TemporaryDirectory()
        var options = StoreOptions()
        options.checkpointRecords = 500
        let log = try S.open(directory, options: options)
        let clients = 50
        let perClient = 3_600
        // Commits follow each other without a pause, so a checkpoint on another connection never finds the log
        // wholly copied; without the writer finishing it, the log grew by every commit's pages (here about 4 pages
        // of 4,120 bytes per commit of 25 calls: 100 MB for these 180,000 calls; 3-4 MB with it, the pages of one
        // checkpoint's worth of commits).
        try await EnqueueOrder(log).donate(clients: clients, each: perClient, prefix: "w")
        let statistics = try #require(log.statistics())
        #expect(statistics.storedDonations == clients * perClient)
        // Every commit writes at least one page (4,096 bytes and a 24-byte frame header) to the log: a log that never
        // started again would be at least commits x 4,120 bytes long, however the calls were grouped. Half of that
        // leaves room for a slow checkpointer (1.1 MB after 7,146 commits here when quiet, 2.7 MB after 5,865 under
        // two CPU hogs and an fsync loop).
        let walBytes = try #require(
            try FileManager.default.attributesOfItem(atPath: directory.database + "-wal")[.size] as? Int)
        #expect(
            walBytes < statistics.commits * 4_120 / 2,
            "write-ahead log \(walBytes) bytes after \(statistics.commits) commits")
        await log.close()
        let reopened = try S.open(directory)
        #expect(try reopened.load().events.count == clients * perClient)
        await reopened.close()
    }

    /// Large records are checkpointed by their bytes, not only by their count: 1,500 records of 20 KB each (30 MB,
    /// far fewer than `checkpointRecords`) grew the log by all of them. How far the log grows between two
    /// checkpoints depends on how fast the checkpointer copies while commits go on (4-8 MB here when quiet, 18 MB
    /// on a loaded CI machine), so the test asserts what the byte count guarantees: checkpoints ran, and the log
    /// started again before it held every record.
    @Test func largeRecordsAreCheckpointedByTheirBytes() async throws {
        let directory = try TemporaryDirectory()
        let log = try S.open(directory)
        let value = String(repeating: "x", count: 20_000)
        for index in 0..<1_500 {
            let donation = Donation(
                id: "big\(index)", app: S.app("mail"), intent: "open", parameters: ["text": value],
                date: S.t(Double(index)))
            try await log.enqueue([.donate(donation)]).committed()
        }
        let walBytes = try #require(
            try FileManager.default.attributesOfItem(atPath: directory.database + "-wal")[.size] as? Int)
        // 30 MB of records at 4 MB a checkpoint: seven requested; the first always runs, a second unless the first
        // took as long as the other 26 MB of commits.
        #expect(log.checkpoints >= 2, "\(log.checkpoints) checkpoints after 30 MB of records")
        #expect(walBytes < 1_500 * 20_000, "write-ahead log \(walBytes) bytes after 30 MB of records")
        await log.close()
        let reopened = try S.open(directory)
        #expect(try reopened.load().events.count == 1_500)
        await reopened.close()
    }

    @Test("a held burst waits for flush, then shares one commit; whenResolved callbacks run once it is stored")
    func heldBurst() async throws {
        let directory = try TemporaryDirectory()
        let log = try S.open(directory)
        // The writer is idle after the first commit; held events do not wake it.
        try await log.enqueue([S.donation("mail", id: "first", at: 0)]).committed()
        let tickets = (0..<20).map { log.enqueueHeld(S.donation("mail", id: "h\($0)", at: Double($0 + 1))) }
        try await Task.sleep(for: .milliseconds(200))
        #expect(tickets.allSatisfy { $0.outcome == nil }, "held events were committed without a flush")
        #expect(log.statistics()?.commits == 1)
        let resolved = Mutex<[StoreFailure?]>([])
        let waiter = try #require(tickets.last?.waiter)
        waiter.whenResolved { failure in resolved.withLock { $0.append(failure) } }
        log.flush()
        try await tickets.last?.committed()
        // Every ticket of the burst is the same commit's; the callback ran once, with success.
        for ticket in tickets { #expect(ticket.outcome.map { (try? $0.get()) != nil } == true) }
        for _ in 0..<100 where resolved.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(10)) }
        #expect(resolved.withLock { $0.count == 1 && $0[0] == nil })
        #expect(log.statistics()?.commits == 2)
        #expect(log.statistics()?.storedDonations == 21)
        // A callback registered after the commit runs at once.
        let late = Mutex(false)
        waiter.whenResolved { _ in late.withLock { $0 = true } }
        #expect(late.withLock { $0 })
        await log.close()
    }

    @Test("app owners are stored with the next commit, the first claim kept, and read back after reopening")
    func appOwners() async throws {
        let directory = try TemporaryDirectory()
        let log = try S.open(directory)
        log.recordOwner(app: S.app("mail"), uid: 1_000)
        log.recordOwner(app: S.app("news"), uid: 65_534)
        log.recordOwner(app: S.app("mail"), uid: 2_000)  // a second claim never replaces the first
        try await log.enqueue([S.donation("mail", id: "a", at: 0)]).committed()
        #expect(try log.load().owners == [S.app("mail"): 1_000, S.app("news"): 65_534])
        await log.close()
        let reopened = try S.open(directory)
        #expect(try reopened.load().owners == [S.app("mail"): 1_000, S.app("news"): 65_534])
        await reopened.close()
    }

    @Test("a lone call is committed at once, not held for company; a call after a shared commit is")
    func loneCall() async throws {
        let directory = try TemporaryDirectory()
        var options = StoreOptions()
        options.commitDelayMicroseconds = 10_000
        let log = try S.open(directory, options: options)
        for index in 0..<51 {
            try await log.enqueue([S.donation("mail", id: "l\(index)", at: Double(index))]).committed()
        }
        #expect(log.companyWaits == 0)
        // Two calls handed to the idle writer together share a commit; a lone call after that commit is held for
        // company (up to the delay), since calls came two at a time. (The sleeps let the writer go idle first.)
        try await Task.sleep(for: .milliseconds(20))
        let first = log.enqueueHeld(S.donation("mail", id: "s0", at: 100))
        let second = log.enqueueHeld(S.donation("mail", id: "s1", at: 101))
        log.flush()
        try await first.committed()
        try await second.committed()
        try await Task.sleep(for: .milliseconds(20))
        try await log.enqueue([S.donation("mail", id: "s2", at: 102)]).committed()
        #expect(log.companyWaits >= 1)
        await log.close()
    }

    @Test("a full database fails the commit and every call queued after it, then takes records again")
    func fullDatabase() async throws {
        let directory = try TemporaryDirectory()
        var options = StoreOptions()
        options.maximumPages = 40
        let log = try S.open(directory, options: options)
        _ = try log.load()
        var stored = 0
        var failure: StoreFailure?
        let padding = String(repeating: "x", count: 2_000)
        for index in 0..<1_000 {
            let event = EngineEvent.donate(
                Donation(id: "f\(index)", app: S.app("mail"), intent: padding, date: S.t(Double(index))))
            do {
                try await log.enqueue([event]).committed()
                stored += 1
            } catch {
                failure = error
                break
            }
        }
        let reason = try #require(failure).reason
        #expect(reason.contains(directory.database))
        #expect(reason.contains("full"))
        guard case .failed(_, reloadNeeded: true) = log.status else {
            Issue.record("expected a failed log waiting for its owner's reload, got \(log.status)")
            return
        }
        // Nothing is taken until the owner re-read the stored state...
        await #expect(throws: StoreFailure.self) {
            try await log.enqueue([S.donation("mail", id: "late", at: 0)]).committed()
        }
        let history = try log.load()
        #expect(history.events.count == stored)
        // ...and a test write succeeded: then it takes records again (which fail again while the disk is full).
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(5)
        while log.status != .accepting, clock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(log.status == .accepting)
        // The keys committed before the failure were read back with the stored state: found, and deletable.
        #expect(try log.donation(app: S.app("mail"), id: "f\(stored - 1)")?.id == "f\(stored - 1)")
        try await log.delete(donations: [(S.app("mail"), "f0"), (S.app("mail"), "f1")], engine: Engine()).committed()
        #expect(try log.donation(app: S.app("mail"), id: "f0") == nil)
        #expect(try log.donation(app: S.app("mail"), id: "f2")?.id == "f2")
        try await log.enqueue([S.donation("mail", id: "small", at: 0)]).committed()
        await log.close()
    }

    @Test("a failed log is not tried again while the disk has less free space than a commit may need")
    func failedLogWaitsForFreeSpace() async throws {
        let directory = try TemporaryDirectory()
        var options = StoreOptions()
        options.maximumPages = 40
        // More than any disk here has free: the test write would succeed (the database's pages are full, the
        // file system is not), but the log waits for space.
        options.resumeFreeBytes = Int.max
        let log = try S.open(directory, options: options)
        _ = try log.load()
        let padding = String(repeating: "x", count: 2_000)
        var failed = false
        for index in 0..<1_000 where !failed {
            let event = EngineEvent.donate(
                Donation(id: "f\(index)", app: S.app("mail"), intent: padding, date: S.t(Double(index))))
            do { try await log.enqueue([event]).committed() } catch { failed = true }
        }
        #expect(failed)
        _ = try log.load()
        // Three probe periods: still failed, not accepting.
        try await Task.sleep(for: .milliseconds(3_200))
        guard case .failed(_, reloadNeeded: false) = log.status else {
            Issue.record("expected the log to wait for free space, got \(log.status)")
            return
        }
        await #expect(throws: StoreFailure.self) {
            try await log.enqueue([S.donation("mail", id: "late", at: 0)]).committed()
        }
        await log.close()
    }
}

/// Queues from one actor, as the engine's owner does, so the log's order is one order.
actor EnqueueOrder {
    let log: SQLiteEventLog
    init(_ log: SQLiteEventLog) { self.log = log }
    func enqueue(_ event: EngineEvent) -> CommitTicket { log.enqueue([event]) }

    /// `clients` callers each donating `each` times, a call at a time: queued from this one place (as the engine's
    /// owner does) and awaited concurrently; ids `<prefix><client>-<index>`.
    nonisolated func donate(clients: Int, each: Int, prefix: String) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in 0..<clients {
                group.addTask {
                    for index in 0..<each {
                        let ticket = await self.enqueue(
                            StoreFixture.donation("mail", id: "\(prefix)\(client)-\(index)", at: Double(index)))
                        try await ticket.committed()
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}
