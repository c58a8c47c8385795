import SmartStackCore
import SmartStackEval
import Testing

/// A ranker whose order is not a permutation of its stack.
struct BrokenRanker: MomentRanker {
    var stack: [String]
    mutating func open(app: String, at time: Timestamp) {}
    mutating func order(at time: Timestamp) -> [String] { Array(stack.dropLast()) + [stack[0]] }
}

@Suite struct RankerGuardTests {
    @Test func baselinesAnswerWithTheWholeStack() throws {
        let stack = ["A", "B", "C", "D"]
        for factory in Baselines.baselines {
            var ranker = factory.make(stack)
            #expect(ranker.order(at: Timestamp(microseconds: 0)) == stack, "\(factory.name) with no history")
            ranker.open(app: "C", at: Timestamp(microseconds: 1_000_000))
            ranker.open(app: "elsewhere", at: Timestamp(microseconds: 2_000_000))
            #expect(ranker.order(at: Timestamp(microseconds: 3_000_000)) == ["C", "A", "B", "D"], "\(factory.name)")
        }
    }

    @Test func frecencyKeepsItsOrderAcrossARebase() {
        // Opens 20,000 days apart move the base day; an old open then weighs e^(-625) ≈ 0 next to a new one.
        var ranker = FrecencyRanker(stack: ["A", "B"])
        let day: Int64 = 86_400 * 1_000_000
        for _ in 0..<3 { ranker.open(app: "B", at: Timestamp(microseconds: 0)) }
        ranker.open(app: "A", at: Timestamp(microseconds: 20_000 * day))
        #expect(ranker.order(at: Timestamp(microseconds: 20_000 * day)) == ["A", "B"])
        ranker.open(app: "B", at: Timestamp(microseconds: 20_001 * day))
        ranker.open(app: "B", at: Timestamp(microseconds: 20_001 * day))
        #expect(ranker.order(at: Timestamp(microseconds: 20_001 * day)) == ["B", "A"])
    }

    /// Two rows A and B at 09:00, so the stack is [A, B], then `rows`.
    static func log(_ rows: String) throws -> UsageLog {
        try UsageLog.parse(
            "user\ttime\tapp\tevent\nu\t2024-03-04T09:00:00Z\tA\topen\nu\t2024-03-04T09:00:00Z\tB\topen\n" + rows,
            file: "t.tsv")
    }

    @Test func anOrderThatIsNotAPermutationIsAProgrammingError() async {
        await #expect(processExitsWith: .failure) {
            let log = try RankerGuardTests.log("u\t2024-03-04T09:01:00Z\t-\thome\nu\t2024-03-04T09:02:00Z\tA\topen\n")
            _ = Evaluation.run(logs: [log], rankers: [RankerFactory(name: "broken") { BrokenRanker(stack: $0) }])
        }
    }

    @Test func everyQueryIsCheckedNotOnlyCountedMoments() async {
        // The only home row has no target, and still its order must be a permutation.
        await #expect(processExitsWith: .failure) {
            let log = try RankerGuardTests.log("u\t2024-03-04T09:01:00Z\t-\thome\n")
            _ = Evaluation.run(logs: [log], rankers: [RankerFactory(name: "broken") { BrokenRanker(stack: $0) }])
        }
    }

    @Test func theGuardAcceptsAPermutation() throws {
        let log = try Self.log("u\t2024-03-04T09:01:00Z\t-\thome\n")
        #expect(Evaluation.run(logs: [log], rankers: Baselines.baselines).moments == 0)
    }
}
