import SmartStackCore
import SmartStackEval
import Testing

/// The protocol on a small log whose numbers are worked out by hand below (and agree with the Python
/// reference, /work/proto/evalproto.py, run with K = 3).
@Suite struct EvaluationTests {
    // ann, UTC-08:00, all on Monday 2024-03-04 (local hours 9 and 10).
    // Opens over the whole log: A 3 (first on row 1), C 3 (first on row 8), B 2 (row 2), D 2 (row 11).
    // Stack with K = 3: [A, C, B] — A before C and B before D by first appearance; D is outside it.
    static let ann = [
        "ann\t2024-03-04T09:00:00-08:00\tA\topen",  //  1
        "ann\t2024-03-04T09:05:00-08:00\tB\topen",  //  2
        "ann\t2024-03-04T09:10:00-08:00\t-\thome",  //  3  moment a1: B after 1 min
        "ann\t2024-03-04T09:11:00-08:00\tB\topen",  //  4
        "ann\t2024-03-04T09:20:00-08:00\t-\thome",  //  5  no moment: the next open is 15 min later
        "ann\t2024-03-04T09:35:00-08:00\tA\topen",  //  6
        "ann\t2024-03-04T09:40:00-08:00\t-\thome",  //  7  moment a2: C after exactly 10 min (inclusive)
        "ann\t2024-03-04T09:50:00-08:00\tC\topen",  //  8
        "ann\t2024-03-04T10:00:00-08:00\t-\thome",  //  9  no moment: the next home comes before any open
        "ann\t2024-03-04T10:01:00-08:00\t-\thome",  // 10  moment a3: D, outside the stack, so not counted
        "ann\t2024-03-04T10:02:00-08:00\tD\topen",  // 11
        "ann\t2024-03-04T10:10:00-08:00\t-\thome",  // 12  moment a4: A
        "ann\t2024-03-04T10:12:00-08:00\tA\topen",  // 13
        "ann\t2024-03-04T10:20:00-08:00\tC\topen",  // 14
        "ann\t2024-03-04T10:30:00-08:00\t-\thome",  // 15  moment a5: C at the same instant, after in file order
        "ann\t2024-03-04T10:30:00-08:00\tC\topen",  // 16
        "ann\t2024-03-04T10:40:00-08:00\tD\topen",  // 17
    ]
    // Orders at ann's counted moments (target in brackets, rank after it); ties go by stack order [A, C, B]:
    //   mru       a1 B A C [B]1   a2 A B C [C]3   a4 C A B [A]2   a5 C A B [C]1   tops B A C C: 2 changes
    //   mfu       a1 A1=B1 → A B C [B]2   a2 A2=B2 → A B C [C]3   a4 A2=B2>C1 → A B C [A]1
    //             a5 A3>C2=B2 → A C B [C]2   tops all A: 0 changes
    //   frecency  every open and moment on one local day, so exp(0) per open: the same as mfu
    //   hour-mfu  a1 hour 9: A1=B1 → A B C [B]2   a2 hour 9: A2=B2 → A B C [C]3
    //             a4 hour 10: none in the stack (D only) → mfu A B C [A]1
    //             a5 hour 10: A1=C1, then mfu A3>C2 → A C B [C]2   tops all A: 0 changes
    //   markov    transitions between consecutive opens (home rows between them do not break one), from the
    //             latest open, then mfu:
    //             a1 after B: none yet from B → mfu A1=B1 → A B C [B]2
    //             a2 after A: A→B 1 (B→B, B→A do not start at A) → B A C [C]3
    //             a4 after D (outside the stack, still the previous app): none from D → mfu A2=B2>C1 → A B C [A]1
    //             a5 after C: C→D only, D outside the stack → mfu A3>C2=B2 → A C B [C]2   tops A B A A: 2 changes
    //
    // bo, UTC+05:30, so local midnight is 18:30 UTC and a local hour straddles two UTC hours.
    // Opens: Q 3 (first on row 1), P 3 (row 3), S 1. Stack [Q, P, S].
    static let bo = [
        "bo\t2024-02-11T12:00:00+05:30\tQ\topen",  // 1  local day Feb 11 (06:30 UTC Feb 11)
        "bo\t2024-02-11T12:01:00+05:30\tQ\topen",  // 2
        "bo\t2024-03-05T00:10:00+05:30\tP\topen",  // 3  local Mar 5, hour 0 (18:40 UTC Mar 4)
        "bo\t2024-03-05T00:20:00+05:30\t-\thome",  // 4  moment b1: P; local Mar 5 hour 0 (18:50 UTC Mar 4)
        "bo\t2024-03-05T00:21:00+05:30\tP\topen",  // 5  local Mar 5, hour 0 (18:51 UTC Mar 4)
        "bo\t2024-03-05T12:00:00+05:30\tQ\topen",  // 6  local Mar 5, hour 12
        "bo\t2024-03-05T23:55:00+05:30\tS\topen",  // 7  local Mar 5, hour 23 (18:25 UTC Mar 5)
        "bo\t2024-03-06T00:50:00+05:30\t-\thome",  // 8  moment b2: P; local Mar 6 hour 0 (19:20 UTC Mar 5)
        "bo\t2024-03-06T00:52:00+05:30\tP\topen",  // 9
    ]
    // b1: mru P Q S [P]1.  mfu Q2>P1 → Q P S [P]2.
    //     frecency (local days; 2024 is a leap year, Feb 11 → Mar 5 = 23 days): Q 2·e^(-23/32) = 0.975,
    //     P e^0 = 1 → P Q S [P]1. (UTC days would give Q 2·e^(-22/32) = 1.006 > 1 and rank 2.)
    //     hour-mfu local hour 0: P1 → P Q S [P]1.
    // b2: mru S Q P [P]3.  mfu Q3>P2>S1 → Q P S [P]2.
    //     frecency at Mar 6: Q 2·e^(-24/32) + e^(-1/32) = 1.914, P 2·e^(-1/32) = 1.938, S e^(-1/32) = 0.969
    //     → P Q S [P]1. (UTC days: Q 2·e^(-23/32) + 1 = 1.975 > P 1.938, rank 2.)
    //     hour-mfu local hour 0: P2 (00:10, 00:21) → P Q S [P]1. (UTC hour 19: nobody; mfu gives rank 2.)
    //     tops: mru P→S 1 change; mfu Q Q, frecency P P, hour-mfu P P: none.
    // markov: b1 after P: none from P → mfu Q P S [P]2.  b2 after S: none from S (P→P, P→Q, Q→S, Q→Q, Q→P
    //     start elsewhere) → mfu Q P S [P]2.  tops Q Q: none.
    //
    // Totals: moments 5 (ann) + 2 (bo) = 7, counted 4 + 2 = 6, coverage 6/7.
    //   mru       ranks 1 3 2 1 | 1 3  hit@1 3/6  hit@3 6/6  MRR (1+1/3+1/2+1+1+1/3)/6 = 25/36  changes 3 → 50
    //   mfu       ranks 2 3 1 2 | 2 2  hit@1 1/6  hit@3 6/6  MRR (1/2+1/3+1+1/2+1/2+1/2)/6 = 5/9  changes 0
    //   frecency  ranks 2 3 1 2 | 1 1  hit@1 3/6  hit@3 6/6  MRR (1/2+1/3+1+1/2+1+1)/6 = 13/18  changes 0
    //   hour-mfu  ranks 2 3 1 2 | 1 1  hit@1 3/6  hit@3 6/6  MRR 13/18  changes 0
    //   markov    ranks 2 3 1 2 | 2 2  hit@1 1/6  hit@3 6/6  MRR 5/9  changes 2 → 33.3

    static func log(_ rows: [String]) throws -> UsageLog {
        try UsageLog.parse(
            (["# hand-made", "user\ttime\tapp\tevent"] + rows).joined(separator: "\n"), file: "hand.tsv")
    }

    static func expectScore(
        _ result: EvaluationResult, _ name: String, hit1: Double, hit3: Double, mrr: Double, topChanges: Double,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard let score = result.score(of: name) else {
            Issue.record("no ranker \(name)", sourceLocation: sourceLocation)
            return
        }
        #expect(abs(score.hit1 - hit1) < 1e-12, "\(name) hit@1 \(score.hit1)", sourceLocation: sourceLocation)
        #expect(abs(score.hit3 - hit3) < 1e-12, "\(name) hit@3 \(score.hit3)", sourceLocation: sourceLocation)
        #expect(abs(score.mrr - mrr) < 1e-12, "\(name) MRR \(score.mrr)", sourceLocation: sourceLocation)
        #expect(
            abs(score.topChanges - topChanges) < 1e-9, "\(name) top changes \(score.topChanges)",
            sourceLocation: sourceLocation)
    }

    @Test func stacksAreTheMostOpenedAppsTiesByFirstAppearance() throws {
        let log = try Self.log(Self.ann + Self.bo)
        #expect(Evaluation.stack(of: log.users[0].events, size: 3) == ["A", "C", "B"])
        #expect(Evaluation.stack(of: log.users[0].events, size: 10) == ["A", "C", "B", "D"])
        #expect(Evaluation.stack(of: log.users[1].events, size: 3) == ["Q", "P", "S"])
        #expect(Evaluation.stack(of: log.users[1].events, size: 1) == ["Q"])
    }

    @Test func targetsAreTheNextOpenWithinTenMinutesBeforeTheNextHome() throws {
        let events = try Self.log(Self.ann).users[0].events
        let targets = events.indices.filter { events[$0].kind == .home }.map {
            Evaluation.target(ofHomeAt: $0, in: events)
        }
        #expect(targets == ["B", nil, "C", nil, "D", "A", "C"])
    }

    @Test func handWorkedTwoUserLog() throws {
        let result = Evaluation.run(
            logs: [try Self.log(Self.ann + Self.bo)], options: EvaluationOptions(stackSize: 3),
            rankers: Baselines.baselines)
        #expect(result.moments == 7)
        #expect(result.counted == 6)
        #expect(abs(result.coverage - 6.0 / 7.0) < 1e-12)
        #expect(result.rankers.map(\.name) == ["mru", "mfu", "frecency", "hour-mfu", "markov"])
        Self.expectScore(result, "mru", hit1: 0.5, hit3: 1, mrr: 25.0 / 36.0, topChanges: 50)
        Self.expectScore(result, "mfu", hit1: 1.0 / 6.0, hit3: 1, mrr: 5.0 / 9.0, topChanges: 0)
        Self.expectScore(result, "frecency", hit1: 0.5, hit3: 1, mrr: 13.0 / 18.0, topChanges: 0)
        Self.expectScore(result, "hour-mfu", hit1: 0.5, hit3: 1, mrr: 13.0 / 18.0, topChanges: 0)
        Self.expectScore(result, "markov", hit1: 1.0 / 6.0, hit3: 1, mrr: 5.0 / 9.0, topChanges: 200.0 / 6.0)
    }

    @Test func everyUserIsAlsoScoredAlone() throws {
        let result = Evaluation.run(
            logs: [try Self.log(Self.ann + Self.bo)], options: EvaluationOptions(stackSize: 3),
            rankers: Baselines.baselines)
        #expect(result.users.map(\.name) == ["ann", "bo"])
        let ann = try #require(result.users.first?.result)
        let bo = try #require(result.users.last?.result)
        #expect(ann.moments == 5 && ann.counted == 4 && bo.moments == 2 && bo.counted == 2)
        #expect(ann.users.isEmpty)
        // ann's mru ranks 1 3 2 1 (tops B A C C), bo's 1 3 (tops P S): each user's own changes, none across users.
        Self.expectScore(ann, "mru", hit1: 0.5, hit3: 1, mrr: (1 + 1.0 / 3 + 0.5 + 1) / 4, topChanges: 50)
        Self.expectScore(bo, "mru", hit1: 0.5, hit3: 1, mrr: (1 + 1.0 / 3) / 2, topChanges: 50)
        Self.expectScore(bo, "markov", hit1: 0, hit3: 1, mrr: 0.5, topChanges: 0)
        // Best baselines: hit@1 mru, frecency and hour-mfu all 0.5 (the first wins); MRR frecency 13/18.
        let margin = try #require(result.margin(of: "mfu"))
        #expect(margin.bestHit1 == "mru" && margin.bestMRR == "frecency")
        #expect(abs(margin.hit1 - (1.0 / 6.0 - 0.5)) < 1e-12 && abs(margin.mrr - (5.0 / 9.0 - 13.0 / 18.0)) < 1e-12)
    }

    @Test func localCalendarDaysAndLocalHours() throws {
        // bo alone: the two moments where a UTC day or a UTC hour would give rank 2 instead of 1.
        let result = Evaluation.run(
            logs: [try Self.log(Self.bo)], options: EvaluationOptions(stackSize: 3), rankers: Baselines.baselines)
        #expect(result.moments == 2)
        #expect(result.counted == 2)
        Self.expectScore(result, "mru", hit1: 0.5, hit3: 1, mrr: (1 + 1.0 / 3.0) / 2, topChanges: 50)
        Self.expectScore(result, "mfu", hit1: 0, hit3: 1, mrr: 0.5, topChanges: 0)
        Self.expectScore(result, "frecency", hit1: 1, hit3: 1, mrr: 1, topChanges: 0)
        Self.expectScore(result, "hour-mfu", hit1: 1, hit3: 1, mrr: 1, topChanges: 0)
    }

    @Test func aSmallerStackLeavesMoreMomentsUncounted() throws {
        // K = 2: ann's stack is [A, C], so a1 (B) is not counted either; bo's is [Q, P].
        // Counted: a2 C, a4 A, a5 C, b1 P, b2 P. mfu: a2 A2>C0 → A C [C]2; a4 A2>C1 → [A]1;
        // a5 A3>C2 → [C]2; b1 Q2>P1 → [P]2; b2 Q3>P2 → [P]2. hit@1 1/5, MRR (1/2+1+1/2+1/2+1/2)/5 = 0.6.
        let result = Evaluation.run(
            logs: [try Self.log(Self.ann + Self.bo)], options: EvaluationOptions(stackSize: 2),
            rankers: Baselines.baselines)
        #expect(result.moments == 7)
        #expect(result.counted == 5)
        Self.expectScore(result, "mfu", hit1: 0.2, hit3: 1, mrr: 0.6, topChanges: 0)
    }

    @Test func usersOfDifferentFilesAreDifferentUsers() throws {
        // One file: "u" opened A twice and B once, so the stack with K = 1 is [A] and the moment (B) is
        // not counted. Another file has a "u" who opened B three times. Merged, B would lead the stack.
        let first = try Self.log([
            "u\t2024-03-04T09:00:00Z\tA\topen", "u\t2024-03-04T09:01:00Z\tA\topen",
            "u\t2024-03-04T09:02:00Z\t-\thome", "u\t2024-03-04T09:03:00Z\tB\topen",
        ])
        let second = try Self.log([
            "u\t2024-03-04T08:00:00Z\tB\topen", "u\t2024-03-04T08:01:00Z\tB\topen",
            "u\t2024-03-04T08:02:00Z\tB\topen",
        ])
        let result = Evaluation.run(
            logs: [first, second], options: EvaluationOptions(stackSize: 1), rankers: Baselines.baselines)
        #expect(result.moments == 1)
        #expect(result.counted == 0)
        #expect(result.coverage == 0)
        #expect(result.score(of: "mru") == RankerScore(hit1: 0, hit3: 0, mrr: 0, topChanges: 0))
    }

    @Test func everyHomeRowIsAQueryAndRankersSeeOnlyEarlierRows() throws {
        let log = try Self.log(Self.ann + Self.bo)
        let recorder = Recorder()
        _ = Evaluation.run(
            logs: [log], options: EvaluationOptions(stackSize: 3),
            rankers: [RankerFactory(name: "recorder") { stack in RecordingRanker(stack: stack, recorder: recorder) }])
        let expected = (Self.ann + Self.bo).map { row in
            let fields = row.split(separator: "\t", omittingEmptySubsequences: false)
            return fields[3] == "home" ? "order \(fields[0]) \(fields[1])" : "open \(fields[2]) \(fields[1])"
        }
        #expect(recorder.calls == expected)
    }

    @Test func progressEndsWithAllRows() throws {
        let log = try Self.log(Self.ann + Self.bo)
        var reports: [(Int, Int)] = []
        _ = Evaluation.run(logs: [log], rankers: Baselines.baselines) { reports.append(($0, $1)) }
        #expect(reports.last.map { $0 == (26, 26) } == true)
        #expect(reports.allSatisfy { $0.1 == 26 && $0.0 <= 26 })
    }
}

/// Collects what a `RecordingRanker` was told, in order.
final class Recorder: @unchecked Sendable {
    // Only touched from the synchronous evaluation run of one test.
    var calls: [String] = []
}

/// A ranker that records its calls and answers with the stack as it is.
struct RecordingRanker: MomentRanker {
    let stack: [String]
    let recorder: Recorder
    var user: String { stack.contains("A") ? "ann" : "bo" }

    mutating func open(app: String, at time: Timestamp) {
        recorder.calls.append("open \(app) \(time.rfc3339.replacingSuffix())")
    }

    mutating func order(at time: Timestamp) -> [String] {
        recorder.calls.append("order \(user) \(time.rfc3339.replacingSuffix())")
        return stack
    }
}

extension String {
    /// `2024-03-04T09:00:00.000-08:00` as the test rows write it, `2024-03-04T09:00:00-08:00`.
    fileprivate func replacingSuffix() -> String {
        guard let dot = firstIndex(of: ".") else { return self }
        return String(self[..<dot]) + String(self[index(dot, offsetBy: 4)...])
    }
}
