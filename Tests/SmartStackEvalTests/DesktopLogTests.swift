import Foundation
import SmartStackEval
import Testing

/// The reference numbers of docs/usage-log.md on shared/data/usage/desktop.tsv: reproducing them is how
/// this implementation proves it follows the protocol.
@Suite struct DesktopLogTests {
    /// `shared/data/usage/desktop.tsv` beside the package (this file is Tests/SmartStackEvalTests/…).
    static let path = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/data/usage/desktop.tsv").path

    /// `value` to three decimals, as docs/usage-log.md prints it.
    static func thousandths(_ value: Double) -> Int { Int((value * 1_000).rounded()) }

    @Test func baselinesReproduceTheReferenceNumbers() throws {
        let data = try #require(
            FileManager.default.contents(atPath: Self.path),
            "the reference log is missing: expected it at \(Self.path) (shared/ beside the package)")
        let log = try UsageLog.parse(data, file: Self.path)
        let result = Evaluation.run(logs: [log], rankers: Baselines.baselines)

        #expect(result.moments == 3_980)
        #expect(result.counted == 3_310)
        #expect(Self.thousandths(result.coverage) == 832)
        // hit@1 / hit@3 / MRR from docs/usage-log.md; the hit counts and top changes (not in the doc) are
        // those of the Python reference /work/proto/evalproto.py on the same file.
        let expected: [(name: String, hit1: Int, hit3: Int, mrr: Int, hits1: Int, hits3: Int, changes: Int)] = [
            ("mru", 523, 854, 700, 1_732, 2_828, 1_410),
            ("mfu", 453, 641, 592, 1_498, 2_121, 14),
            ("frecency", 454, 656, 599, 1_504, 2_170, 12),
            ("hour-mfu", 445, 705, 611, 1_472, 2_333, 151),
            ("markov", 419, 736, 604, 1_388, 2_435, 712),
        ]
        #expect(result.rankers.map(\.name) == expected.map(\.name))
        for reference in expected {
            let score = try #require(result.score(of: reference.name))
            #expect(Self.thousandths(score.hit1) == reference.hit1, "\(reference.name) hit@1 \(score.hit1)")
            #expect(Self.thousandths(score.hit3) == reference.hit3, "\(reference.name) hit@3 \(score.hit3)")
            #expect(Self.thousandths(score.mrr) == reference.mrr, "\(reference.name) MRR \(score.mrr)")
            #expect(Int((score.hit1 * 3_310).rounded()) == reference.hits1, "\(reference.name) hits@1")
            #expect(Int((score.hit3 * 3_310).rounded()) == reference.hits3, "\(reference.name) hits@3")
            #expect(
                Int((score.topChanges * 33.10).rounded()) == reference.changes, "\(reference.name) top changes")
        }
    }

    /// The engine on the same file: the bar on the aggregate (best baseline + 0.03 hit@1 and + 0.02
    /// MRR), at least the best baseline on both for every person on their own, and the reference numbers of the
    /// README's evaluation table (a change to the ranking must update them honestly).
    @Test func engineClearsTheBarForEveryPerson() throws {
        let data = try #require(
            FileManager.default.contents(atPath: Self.path),
            "the reference log is missing: expected it at \(Self.path) (shared/ beside the package)")
        let log = try UsageLog.parse(data, file: Self.path)
        let rankers = [EngineRanker.factory] + Baselines.baselines

        func check(_ result: EvaluationResult, hit1 bar1: Double, mrr barMRR: Double, _ who: String) throws
            -> RankerScore
        {
            let engine = try #require(result.score(of: "engine"))
            let baselines = result.rankers.filter { $0.name != "engine" }.map(\.score)
            let bestHit1 = baselines.map(\.hit1).max() ?? 0
            let bestMRR = baselines.map(\.mrr).max() ?? 0
            #expect(engine.hit1 >= bestHit1 + bar1, "\(who): engine hit@1 \(engine.hit1) vs best baseline \(bestHit1)")
            #expect(engine.mrr >= bestMRR + barMRR, "\(who): engine MRR \(engine.mrr) vs best baseline \(bestMRR)")
            return engine
        }

        let everyone = Evaluation.run(logs: [log], rankers: rankers)
        let all = try check(everyone, hit1: 0.03, mrr: 0.02, "everyone")
        #expect(Self.thousandths(all.hit1) == 581, "engine hit@1 \(all.hit1)")
        #expect(Self.thousandths(all.hit3) == 860, "engine hit@3 \(all.hit3)")
        #expect(Self.thousandths(all.mrr) == 732, "engine MRR \(all.mrr)")
        // Issue 14: on desktops the top changes no more often than MRU's.
        let mru = try #require(everyone.score(of: "mru"))
        #expect(all.topChanges <= mru.topChanges, "engine top changes \(all.topChanges) vs mru \(mru.topChanges)")

        let expected: [String: (hit1: Int, mrr: Int)] = [
            "sur-A": (419, 628), "sur-B": (596, 739), "sur-C": (718, 825), "sur-D": (515, 694),
        ]
        #expect(Set(log.users.map(\.name)) == Set(expected.keys))
        for user in log.users {
            let result = Evaluation.run(logs: [UsageLog(users: [user])], rankers: rankers)
            let engine = try check(result, hit1: 0, mrr: 0, user.name)
            let reference = try #require(expected[user.name])
            #expect(Self.thousandths(engine.hit1) == reference.hit1, "\(user.name) engine hit@1 \(engine.hit1)")
            #expect(Self.thousandths(engine.mrr) == reference.mrr, "\(user.name) engine MRR \(engine.mrr)")
        }
    }
}
