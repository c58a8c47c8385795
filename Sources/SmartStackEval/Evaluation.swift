import SmartStackCore

/// Settings of the home-moment evaluation.
public struct EvaluationOptions: Sendable, Hashable {
    /// K: how many of a user's most-opened apps make up the stack.
    public var stackSize: Int

    public init(stackSize: Int = 10) {
        self.stackSize = stackSize
    }

    /// How long after a `home` row an `open` may come and still be its target (inclusive).
    public static let targetWindowMicroseconds: Int64 = 600 * 1_000_000
}

/// One ranker's scores over the counted moments of all users (micro average).
public struct RankerScore: Sendable, Hashable, Codable {
    /// Share of counted moments whose target was first.
    public var hit1: Double
    /// Share of counted moments whose target was in the first three.
    public var hit3: Double
    /// Mean of 1/rank of the target.
    public var mrr: Double
    /// Counted moments whose top differed from the user's previous counted moment's top, per 100.
    public var topChanges: Double

    public init(hit1: Double, hit3: Double, mrr: Double, topChanges: Double) {
        self.hit1 = hit1
        self.hit3 = hit3
        self.mrr = mrr
        self.topChanges = topChanges
    }
}

/// What an evaluation run found.
public struct EvaluationResult: Sendable {
    /// `home` rows with a target.
    public var moments: Int
    /// Moments whose target was in the user's stack.
    public var counted: Int
    /// counted / moments (0 when there are no moments).
    public var coverage: Double
    /// Each ranker's scores, in the order the rankers were given.
    public var rankers: [(name: String, score: RankerScore)]
    /// Every user's own result, in the order of the logs and of the users in each (empty in a user's own result).
    public var users: [(name: String, result: EvaluationResult)]

    public init(
        moments: Int, counted: Int, coverage: Double, rankers: [(name: String, score: RankerScore)],
        users: [(name: String, result: EvaluationResult)] = []
    ) {
        self.moments = moments
        self.counted = counted
        self.coverage = coverage
        self.rankers = rankers
        self.users = users
    }

    /// The score of the ranker called `name`.
    public func score(of name: String) -> RankerScore? {
        rankers.first { $0.name == name }?.score
    }

    /// The margin of ranker `name` over the best of the other rankers (the baselines), each measure on its own:
    /// hit@1 over the best hit@1 and MRR over the best MRR, with the names of those best rankers. `nil` when
    /// there is no such ranker or no other.
    public func margin(of name: String) -> Margin? {
        guard let own = score(of: name) else { return nil }
        let others = rankers.filter { $0.name != name }
        guard let bestHit1 = others.max(by: { $0.score.hit1 < $1.score.hit1 }),
            let bestMRR = others.max(by: { $0.score.mrr < $1.score.mrr })
        else { return nil }
        return Margin(
            hit1: own.hit1 - bestHit1.score.hit1, mrr: own.mrr - bestMRR.score.mrr, bestHit1: bestHit1.name,
            bestMRR: bestMRR.name)
    }
}

/// A ranker's lead over the best of the others: positive when it beats every one of them.
public struct Margin: Sendable, Hashable {
    public var hit1: Double
    public var mrr: Double
    /// The rankers with the best hit@1 and the best MRR among the others (the first of equals).
    public var bestHit1: String
    public var bestMRR: String
}

/// The home-moment evaluation protocol of docs/usage-log.md.
public enum Evaluation {
    /// Sums over counted moments for one ranker, over all users so far.
    private struct Tally {
        var hit1 = 0
        var hit3 = 0
        var reciprocalRanks = 0.0
        var topChanges = 0

        /// Adds another user's tally of the same ranker.
        mutating func add(_ other: Tally) {
            hit1 += other.hit1
            hit3 += other.hit3
            reciprocalRanks += other.reciprocalRanks
            topChanges += other.topChanges
        }

        func score(counted: Int) -> RankerScore {
            guard counted > 0 else { return RankerScore(hit1: 0, hit3: 0, mrr: 0, topChanges: 0) }
            let n = Double(counted)
            return RankerScore(
                hit1: Double(hit1) / n, hit3: Double(hit3) / n, mrr: reciprocalRanks / n,
                topChanges: Double(topChanges) * 100 / n)
        }
    }

    /// The user's stack: the `size` apps with the most opens in the whole log, ties by first open.
    public static func stack(of events: [UsageEvent], size: Int) -> [String] {
        var opens: [String: (count: Int, first: Int)] = [:]
        for (index, event) in events.enumerated() {
            guard let app = event.openedApp else { continue }
            opens[app, default: (count: 0, first: index)].count += 1
        }
        let ranked = opens.sorted { a, b in
            a.value.count > b.value.count || (a.value.count == b.value.count && a.value.first < b.value.first)
        }
        return ranked.prefix(max(size, 0)).map(\.key)
    }

    /// The target of the `home` row at `index`: the app of the next row when that is an `open` within
    /// 10 minutes. (The first `open` after the row must also come before the next `home` row, and every
    /// row is one or the other, so only the next row can be the target.)
    public static func target(ofHomeAt index: Int, in events: [UsageEvent]) -> String? {
        let next = index + 1
        guard next < events.count, let app = events[next].openedApp else { return nil }
        let gap = events[next].time.microseconds - events[index].time.microseconds
        return gap <= EvaluationOptions.targetWindowMicroseconds ? app : nil
    }

    /// Replays every user of every log through fresh rankers and scores them.
    ///
    /// Users of different logs are different users, even with the same name. `progress` is called with
    /// (rows replayed, all rows) now and then, and once at the end.
    public static func run(
        logs: [UsageLog], options: EvaluationOptions = EvaluationOptions(), rankers: [RankerFactory],
        progress: ((Int, Int) -> Void)? = nil
    ) -> EvaluationResult {
        let total = logs.reduce(0) { $0 + $1.eventCount }
        let progressStep = max(1, total / 100)
        var replayed = 0
        var moments = 0
        var counted = 0
        var tallies = Array(repeating: Tally(), count: rankers.count)
        var users: [(name: String, result: EvaluationResult)] = []

        for log in logs {
            for user in log.users {
                // The user's own sums; added to everyone's at the end of the user.
                var userMoments = 0
                var userCounted = 0
                var userTallies = Array(repeating: Tally(), count: rankers.count)
                let events = user.events
                let stack = stack(of: events, size: options.stackSize)
                var positions: [String: Int] = [:]
                for (index, app) in stack.enumerated() { positions[app] = index }
                var states = rankers.map { $0.make(stack) }
                var previousTop: [Int?] = Array(repeating: nil, count: rankers.count)
                // Each ranker's latest order, as stack positions.
                var orders: [[Int]] = Array(repeating: [], count: rankers.count)

                for (index, event) in events.enumerated() {
                    replayed += 1
                    if let progress, replayed % progressStep == 0 { progress(replayed, total) }
                    guard case .home = event.kind else {
                        if let app = event.openedApp {
                            for ranker in states.indices { states[ranker].open(app: app, at: event.time) }
                        }
                        continue
                    }
                    // Every home row is a query, counted or not: an engine may learn from it.
                    for ranker in states.indices {
                        let order = states[ranker].order(at: event.time)
                        orders[ranker] = stackPositions(of: order, positions: positions, ranker: rankers[ranker].name)
                    }
                    guard let target = target(ofHomeAt: index, in: events) else { continue }
                    userMoments += 1
                    guard let targetPosition = positions[target] else { continue }
                    userCounted += 1
                    for ranker in states.indices {
                        let order = orders[ranker]
                        // The order is a permutation of the stack, so the target is in it.
                        var rank = 1
                        while order[rank - 1] != targetPosition { rank += 1 }
                        if rank == 1 { userTallies[ranker].hit1 += 1 }
                        if rank <= 3 { userTallies[ranker].hit3 += 1 }
                        userTallies[ranker].reciprocalRanks += 1 / Double(rank)
                        let top = order[0]
                        if let previous = previousTop[ranker], previous != top { userTallies[ranker].topChanges += 1 }
                        previousTop[ranker] = top
                    }
                }
                moments += userMoments
                counted += userCounted
                for ranker in tallies.indices { tallies[ranker].add(userTallies[ranker]) }
                users.append(
                    (
                        user.name,
                        result(moments: userMoments, counted: userCounted, rankers: rankers, tallies: userTallies)
                    ))
            }
        }
        progress?(replayed, total)

        var all = result(moments: moments, counted: counted, rankers: rankers, tallies: tallies)
        all.users = users
        return all
    }

    private static func result(moments: Int, counted: Int, rankers: [RankerFactory], tallies: [Tally])
        -> EvaluationResult
    {
        EvaluationResult(
            moments: moments, counted: counted, coverage: moments > 0 ? Double(counted) / Double(moments) : 0,
            rankers: zip(rankers, tallies).map { (name: $0.name, score: $1.score(counted: counted)) })
    }

    /// `order` as positions in the stack, after checking that it is a permutation of the stack: anything
    /// else is a bug in the ranker.
    private static func stackPositions(of order: [String], positions: [String: Int], ranker: String) -> [Int] {
        precondition(
            order.count == positions.count,
            "ranker '\(ranker)' returned \(order.count) apps for a stack of \(positions.count)")
        var seen = Array(repeating: false, count: positions.count)
        return order.map { app in
            guard let position = positions[app], !seen[position] else {
                preconditionFailure("ranker '\(ranker)' returned '\(app)' twice or from outside the stack")
            }
            seen[position] = true
            return position
        }
    }
}
