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
}
