import Foundation
import SmartStackEval
import Testing

/// The reference numbers of docs/usage-log.md on shared/data/usage/phone.tsv (one person's Android phone).
@Suite struct PhoneLogTests {
    /// `shared/data/usage/phone.tsv` beside the package.
    static let path = URL(fileURLWithPath: DesktopLogTests.path)
        .deletingLastPathComponent().appendingPathComponent("phone.tsv").path

    static func load() throws -> UsageLog {
        let data = try #require(
            FileManager.default.contents(atPath: path),
            "the reference log is missing: expected it at \(path) (shared/ beside the package)")
        return try UsageLog.parse(data, file: path)
    }

    @Test func baselinesReproduceTheReferenceNumbers() throws {
        let result = Evaluation.run(logs: [try Self.load()], rankers: Baselines.baselines)
        #expect(result.moments == 6_227)
        #expect(result.counted == 5_626)
        #expect(DesktopLogTests.thousandths(result.coverage) == 903)
        let expected: [(name: String, hit1: Int, hit3: Int, mrr: Int)] = [
            ("mru", 637, 833, 754), ("mfu", 376, 681, 570), ("frecency", 376, 683, 570),
            ("hour-mfu", 371, 697, 571), ("markov", 637, 845, 758),
        ]
        #expect(result.rankers.map(\.name) == expected.map(\.name))
        for reference in expected {
            let score = try #require(result.score(of: reference.name))
            #expect(DesktopLogTests.thousandths(score.hit1) == reference.hit1, "\(reference.name) hit@1 \(score.hit1)")
            #expect(DesktopLogTests.thousandths(score.hit3) == reference.hit3, "\(reference.name) hit@3 \(score.hit3)")
            #expect(DesktopLogTests.thousandths(score.mrr) == reference.mrr, "\(reference.name) MRR \(score.mrr)")
        }
    }

    /// The engine on the phone: above the best baseline by at least 0.03 hit@1 and 0.02 MRR, the reference numbers
    /// of the README (a change to the ranking must update them honestly), and top changes at most a quarter
    /// more often than MRU's (measured: 2,864 against MRU's 2,307, 1.2414×).
    @Test func engineBeatsTheBestBaselineWithAStableTop() throws {
        let result = Evaluation.run(logs: [try Self.load()], rankers: [EngineRanker.factory] + Baselines.baselines)
        let engine = try #require(result.score(of: "engine"))
        let margin = try #require(result.margin(of: "engine"))
        #expect(margin.hit1 >= 0.03 && margin.mrr >= 0.02, "margin \(margin)")
        #expect(DesktopLogTests.thousandths(engine.hit1) == 670, "engine hit@1 \(engine.hit1)")
        #expect(DesktopLogTests.thousandths(engine.mrr) == 779, "engine MRR \(engine.mrr)")
        let mru = try #require(result.score(of: "mru"))
        let counted = Double(result.counted)
        let changes = (engine.topChanges * counted / 100).rounded()
        let mruChanges = (mru.topChanges * counted / 100).rounded()
        #expect(changes <= mruChanges * 1.25, "engine \(changes) top changes vs mru \(mruChanges)")
    }
}
