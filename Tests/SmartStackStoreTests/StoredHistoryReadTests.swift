import SmartStackCore
import SmartStackStore
import Testing

/// The store as the history of record: what the service reads back instead of keeping a copy in memory.
@Suite("The stored history read back", .timeLimit(.minutes(2)))
struct StoredHistoryReadTests {
    typealias S = StoreFixture

    /// A log with donations of two apps, a publish mark, one deleted donation and a snapshot.
    private func filled(_ directory: TemporaryDirectory) async throws -> SQLiteEventLog {
        let log = try S.open(directory)
        try await log.enqueue([
            .registerKind(S.kind("mail"), at: S.t(0)),
            S.donation("mail", id: "m1", at: 1),
            S.donation("news", id: "n1", at: 2),
            S.donation("mail", id: "m2", at: 3),
            .publish(at: S.t(3.5)),
            S.donation("mail", id: "m3", at: 4),
        ]).committed()
        try await log.delete(donations: [(S.app("mail"), "m2")], engine: Engine()).committed()
        try await log.enqueue([S.donation("mail", id: "m4", at: 5)]).committed()
        return log
    }

    /// A page of mail's donations with these ids (as `filled` donated them) through a sequence number.
    private func page(_ ids: [String], through: Int64) -> DonationPage {
        let dates: [String: Double] = ["m1": 1, "m2": 3, "m3": 4, "m4": 5, "m5": 6]
        return DonationPage(
            donations: ids.compactMap { id in dates[id].flatMap { S.donation("mail", id: id, at: $0).donation } },
            through: through)
    }

    @Test(
        "a cursor stays good when the page's last donation is deleted, and after the log's last record is deleted and the log reopened"
    )
    func cursorAcrossDeletion() async throws {
        let directory = try TemporaryDirectory()
        let log = try await filled(directory)
        let mail = S.app("mail")
        let first = try #require(try log.donations(app: mail, from: .beginning, limit: 2))
        #expect(first == page(["m1", "m3"], through: 6))
        try await log.delete(donations: [(mail, "m3")], engine: Engine()).committed()
        #expect(try log.donations(app: mail, from: .after(id: "m3"), limit: 2) == nil, "an id is gone with it")
        #expect(try log.donations(app: mail, from: .cursor(first.through), limit: 2) == page(["m4"], through: 7))
        // The last record deleted: a new log's numbering must not give its number again, or a cursor through it
        // would skip what comes next.
        try await log.delete(donations: [(mail, "m4")], engine: Engine()).committed()
        await log.close()
        let reopened = try S.open(directory)
        #expect(try reopened.loadStart().lastSequence == 7)
        try await reopened.enqueue([S.donation("mail", id: "m5", at: 6)]).committed()
        #expect(try reopened.donations(app: mail, from: .cursor(7), limit: 2) == page(["m5"], through: 8))
        await reopened.close()
    }

    @Test("start: the snapshot and the counts, not the events; numbering goes on after the last record")
    func start() async throws {
        let directory = try TemporaryDirectory()
        await (try await filled(directory)).close()
        let log = try S.open(directory)
        let start = try log.loadStart()
        #expect(start.snapshot?.through == 6)
        #expect(start.lastSequence == 7)
        #expect(start.events == 6)
        #expect(start.donationsPerApp == [S.app("mail"): 3, S.app("news"): 1])
        #expect(log.lastSequence == 7)
        try await log.enqueue([S.donation("news", id: "n2", at: 6)]).committed()
        #expect(log.lastSequence == 8)
        await log.close()
    }

    @Test("replay gives the events after and through the given sequence numbers, in order, deleted rows left out")
    func replayRange() async throws {
        let directory = try TemporaryDirectory()
        let log = try await filled(directory)
        var all: [EngineEvent] = []
        try log.replay(after: 0, through: .max) { all.append($0) }
        #expect(all.count == 6)
        #expect(all.compactMap(\.donation?.id) == ["m1", "n1", "m3", "m4"])
        var middle: [EngineEvent] = []
        try log.replay(after: 2, through: 5) { middle.append($0) }
        // Sequence numbers 3 (n1), 4 (m2, deleted), 5 (the publish mark).
        #expect(middle == [S.donation("news", id: "n1", at: 2), .publish(at: S.t(3.5))])
        await log.close()
    }

    @Test("a donation is found by app and id; a deleted one or another app's is not")
    func lookup() async throws {
        let directory = try TemporaryDirectory()
        let log = try await filled(directory)
        #expect(try log.donation(app: S.app("mail"), id: "m3") == S.donation("mail", id: "m3", at: 4).donation)
        #expect(try log.donation(app: S.app("mail"), id: "m2") == nil)
        #expect(try log.donation(app: S.app("news"), id: "m1") == nil)
        await log.close()
    }

    @Test("pages of an app's donations in recorded order, after an id; an unknown id is nil")
    func pages() async throws {
        let directory = try TemporaryDirectory()
        let log = try await filled(directory)
        let mail = S.app("mail")
        // Sequence numbers: m1 2, n1 3, m2 4 (deleted), m3 6, m4 7.
        #expect(try log.donations(app: mail, from: .beginning, limit: 2) == page(["m1", "m3"], through: 6))
        #expect(try log.donations(app: mail, from: .after(id: "m3"), limit: 2) == page(["m4"], through: 7))
        #expect(try log.donations(app: mail, from: .after(id: "m4"), limit: 2) == page([], through: 7))
        #expect(try log.donations(app: mail, from: .after(id: "m2"), limit: 2) == nil)
        #expect(try log.donations(app: S.app("other"), from: .beginning, limit: 2) == page([], through: 0))
        // A cursor is a place in the log, not a donation: after the deleted m2's place, after a record of another app.
        #expect(try log.donations(app: mail, from: .cursor(4), limit: 2) == page(["m3", "m4"], through: 7))
        #expect(try log.donations(app: mail, from: .cursor(3), limit: 1) == page(["m3"], through: 6))
        #expect(try log.donations(app: mail, from: .cursor(99), limit: 2) == page([], through: 99))
        var keys: [String] = []
        try log.forEachDonationKey { keys.append("\($0)/\($1)") }
        #expect(
            keys.sorted() == [
                "com.example.mail/m1", "com.example.mail/m3", "com.example.mail/m4", "com.example.news/n1",
            ])
        var news: [String] = []
        try log.forEachDonation(app: S.app("news")) { news.append($0.id) }
        #expect(news == ["n1"])
        await log.close()
    }
}
