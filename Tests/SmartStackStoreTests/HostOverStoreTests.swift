import Logging
import SmartStackCore
import SmartStackServer
import SmartStackStore
import Testing

/// The engine's owner over the SQLite log, with no copy of the history in memory: what it answers from the store.
@Suite("The engine's owner reads its history from the store", .timeLimit(.minutes(2)))
struct HostOverStoreTests {
    typealias S = StoreFixture

    struct Clock: ServiceClock {
        let time: Timestamp
        func now() -> Timestamp { time }
    }

    static let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    private func openHost(
        _ directory: TemporaryDirectory, at seconds: Double = 100, settings: EngineSettings = EngineSettings()
    ) async throws -> EngineHost {
        let log = try S.open(directory)
        let host = EngineHost(settings: settings, clock: Clock(time: S.t(seconds)), log: log, logger: Self.logger)
        try await host.restore()
        return host
    }

    private func donation(_ app: String, _ id: String, at seconds: Double, intent: String = "open") -> Donation {
        Donation(id: id, app: S.app(app), intent: intent, date: S.t(seconds))
    }

    private func stop(_ host: EngineHost) async {
        await host.stop()
        await host.closeLog()
    }

    @Test(
        "after a restart, a retried donation is accepted without a new row and a different one under its id is a conflict"
    )
    func retriesAfterRestart() async throws {
        let directory = try TemporaryDirectory()
        var host = try await openHost(directory)
        for index in 0..<50 {
            _ = try await host.donate(donation("mail", "d\(index)", at: Double(index)), idGiven: true)
        }
        await stop(host)
        host = try await openHost(directory)
        // Whether the id filter is filled yet or not, the answer is the same.
        #expect(try await host.donate(donation("mail", "d7", at: 7), idGiven: true) == "d7")
        await #expect(
            throws: HostError.core(
                .conflict(kind: "donation", id: "d7", reason: "the app already used this id for another donation"))
        ) {
            try await host.donate(donation("mail", "d7", at: 7, intent: "compose"), idGiven: true)
        }
        // Another app may use the same id.
        #expect(try await host.donate(donation("news", "d7", at: 8), idGiven: true) == "d7")
        #expect(await host.snapshotStatistics().donations == 51)
        await stop(host)
    }

    /// A start that had no usable snapshot (the service was killed before its first one, or the stored one is of
    /// another layout) takes one: the next start replays nothing.
    @Test func aStartThatReplayedTheWholeLogTakesASnapshot() async throws {
        let directory = try TemporaryDirectory()
        var host = try await openHost(directory)
        for index in 0..<20 {
            _ = try await host.donate(donation("mail", "d\(index)", at: Double(index)), idGiven: true)
        }
        // Closed without stop (as after kill -9): no final snapshot.
        await host.closeLog()
        host = EngineHost(
            settings: EngineSettings(), clock: Clock(time: S.t(100)), log: try S.open(directory), logger: Self.logger)
        let first = try await host.restore()
        #expect(!first.fromSnapshot && first.replayed >= 20)
        await host.closeLog()
        host = EngineHost(
            settings: EngineSettings(), clock: Clock(time: S.t(100)), log: try S.open(directory), logger: Self.logger)
        let second = try await host.restore()
        #expect(second.fromSnapshot && second.replayed == 0, "\(second)")
        #expect(await host.snapshotStatistics().donations == 20)
        await stop(host)
    }

    @Test("a donation not yet committed is known: its retry waits for the same commit, a different one is a conflict")
    func retryBeforeCommit() async throws {
        let directory = try TemporaryDirectory()
        let host = try await openHost(directory)
        let first = donation("mail", "x", at: 1)
        func donateNow(_ donation: Donation) async throws(HostError) -> (id: String, ticket: CommitTicket) {
            try await host.perform { host in
                Result { () throws(HostError) in try host.donateNow(donation, idGiven: true) }
            }.get()
        }
        #expect(try await donateNow(first).id == "x")
        let retried = try await donateNow(first)
        #expect(retried.id == "x")
        let other = donation("mail", "x", at: 2)
        await #expect(throws: HostError.self) { try await donateNow(other) }
        try await retried.ticket.committed()
        #expect(
            try await host.listDonations(app: S.app("mail"), from: .beginning, limit: 10).donations.map(\.id) == ["x"])
        await stop(host)
    }

    @Test(
        "a donation sent without a date, retried without one while its commit is pending, after it and after a restart, is stored once"
    )
    func undatedRetries() async throws {
        let directory = try TemporaryDirectory()
        var host = try await openHost(directory)
        func donateNow(_ donation: Donation) async throws(HostError) -> (id: String, ticket: CommitTicket) {
            try await host.perform { host in
                Result { () throws(HostError) in try host.donateNow(donation, idGiven: true, dated: false) }
            }.get()
        }
        // Each call is stamped with the service's time when it comes (here given, as the dispatcher does).
        let first = donation("mail", "u", at: 1)
        #expect(try await donateNow(first).id == "u")
        let retried = try await donateNow(first.withDate(S.t(2)))
        #expect(retried.id == "u")
        await #expect(throws: HostError.self) { try await donateNow(donation("mail", "u", at: 3, intent: "compose")) }
        try await retried.ticket.committed()
        #expect(try await host.donate(first.withDate(S.t(4)), idGiven: true, dated: false) == "u")
        await stop(host)
        host = try await openHost(directory)
        #expect(try await host.donate(first.withDate(S.t(5)), idGiven: true, dated: false) == "u")
        await #expect(
            throws: HostError.core(
                .conflict(kind: "donation", id: "u", reason: "the app already used this id for another donation"))
        ) {
            try await host.donate(donation("mail", "u", at: 6, intent: "compose"), idGiven: true, dated: false)
        }
        #expect(try await host.listDonations(app: S.app("mail"), from: .beginning, limit: 10).donations == [first])
        #expect(await host.snapshotStatistics().donations == 1)
        await stop(host)
    }

    @Test("a restarted service sweeps retention at its first moment, not a whole sweep interval after the start")
    func restartSweepsAtOnce() async throws {
        let directory = try TemporaryDirectory()
        var settings = EngineSettings()
        settings.retention = 86_400
        var host = try await openHost(directory, settings: settings)
        _ = try await host.donate(donation("mail", "old", at: 50), idGiven: true)
        _ = try await host.donate(donation("mail", "kept", at: 99), idGiven: true)
        await stop(host)
        // Restarted at a day and 60 s: "old" (at 50) is 10 s past retention, "kept" (at 99) 39 s short of it. The
        // clock stands still, as if no life of the service lasted the sweep interval: only a sweep at the start
        // forgets "old".
        host = try await openHost(directory, at: 86_400 + 60, settings: settings)
        _ = await host.stacks()
        var listed = try await host.listDonations(app: S.app("mail"), from: .beginning, limit: 10).donations.map(\.id)
        for _ in 0..<300 where listed.count == 2 {
            try await Task.sleep(for: .milliseconds(10))
            listed = try await host.listDonations(app: S.app("mail"), from: .beginning, limit: 10).donations.map(\.id)
        }
        #expect(listed == ["kept"])
        await stop(host)
    }

    @Test("deleting after a restart rebuilds from the stored log: the deleted are gone for good and their ids free")
    func deletionAfterRestart() async throws {
        let directory = try TemporaryDirectory()
        var host = try await openHost(directory)
        for index in 0..<30 {
            _ = try await host.donate(
                donation(index % 3 == 0 ? "news" : "mail", "d\(index)", at: Double(index)), idGiven: true)
        }
        await stop(host)
        host = try await openHost(directory)
        let deleted = try await host.deleteDonations(app: S.app("news"), filter: .ids(["d0", "d3", "d27"]))
        #expect(deleted == 3)
        #expect(await host.snapshotStatistics().donations == 27)
        let news = try await host.listDonations(app: S.app("news"), from: .beginning, limit: 100).donations.map(\.id)
        #expect(news == ["d6", "d9", "d12", "d15", "d18", "d21", "d24"])
        // Deleted ids are free again.
        #expect(try await host.donate(donation("news", "d3", at: 40), idGiven: true) == "d3")
        await stop(host)
        host = try await openHost(directory)
        #expect(
            try await host.listDonations(app: S.app("news"), from: .after(id: "d24"), limit: 100).donations.map(\.id)
                == ["d3"])
        await stop(host)
    }

    @Test("concurrent deletions share rebuilds: each removed donation counted once, all of them gone")
    func concurrentDeletions() async throws {
        let directory = try TemporaryDirectory()
        let host = try await openHost(directory)
        for index in 0..<40 {
            _ = try await host.donate(donation("mail", "d\(index)", at: Double(index)), idGiven: true)
        }
        // Twenty calls for one id each, and five asking again for ids others ask for.
        let requests = (0..<20).map { ["d\($0 * 2)"] } + (0..<5).map { ["d\($0 * 2)", "d\($0 * 2 + 1)"] }
        let counts = try await withThrowingTaskGroup(of: Int.self) { group in
            for ids in requests {
                group.addTask { try await host.deleteDonations(app: S.app("mail"), filter: .ids(Set(ids))) }
            }
            return try await group.reduce(0, +)
        }
        #expect(counts == 25)
        let left = try await host.listDonations(app: S.app("mail"), from: .beginning, limit: 100).donations.map(\.id)
        #expect(left == (5..<20).map { "d\($0 * 2 + 1)" })
        #expect(await host.snapshotStatistics().donations == 15)
        await stop(host)
    }
}
