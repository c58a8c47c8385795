/// What a decision does to the model's standings after the model: the simple rankers' fallback, the reason
/// each widget is where it is, engagement, and the suggestions a stack may show.
extension Engine {
    /// Reorders the widgets' behaviour by a simple ranker: the widget in place `k` of its order gets the `k`-th
    /// largest of the model's probabilities (made strictly decreasing, so ties cannot reorder them), and its
    /// contributions become that ranker's share of the log-odds against the stack's average widget.
    func applyFallback(
        _ ranker: StackRanker, signal: Signal, state: StackState, at time: Timestamp,
        to standings: inout [WidgetStanding]
    ) {
        let n = standings.count
        guard state.keys.count == n else { return }
        var sorted = standings.map(\.behaviour)
        sorted.sort(by: >)
        for k in 1..<n where !(sorted[k] < sorted[k - 1]) { sorted[k] = sorted[k - 1].nextDown }
        withUnsafeTemporaryAllocation(of: Double.self, capacity: n) { scores in
            withUnsafeTemporaryAllocation(of: Int.self, capacity: n) { places in
                usage.fallbackScores(ranker, keys: state.keys, at: time, into: scores)
                placesByScore(UnsafeBufferPointer(scores), count: n, into: places)
                var meanLog = 0.0
                for i in 0..<n {
                    standings[i].behaviour = sorted[places[i]]
                    meanLog += safeLog(standings[i].behaviour) / Double(n)
                }
                for i in 0..<n {
                    var shares = SignalShares()
                    shares[signal] = safeLog(standings[i].behaviour) - meanLog
                    if let relevance = standings[i].contributions[.relevance] { shares[.relevance] = relevance }
                    standings[i].contributions = shares
                }
            }
        }
    }

    /// Sorts widget indices by score, highest first, ties in the user's order.
    ///
    /// Each widget's place is counted (how many come before it) rather than found by comparisons that branch:
    /// stacks are small and their scores unpredictable. Scores that are not numbers fall back to a sort.
    static func sortByScore(_ order: inout [Int], _ scores: [Double]) {
        guard order.count == scores.count, !scores.contains(where: \.isNaN) else {
            order.sort { a, b in scores[a] != scores[b] ? scores[a] > scores[b] : a < b }
            return
        }
        let n = scores.count
        order.withUnsafeMutableBufferPointer { order in
            scores.withUnsafeBufferPointer { scores in
                for i in 0..<n {
                    var place = 0
                    for j in 0..<i { place += scores[j] >= scores[i] ? 1 : 0 }
                    for j in (i + 1)..<n { place += scores[j] > scores[i] ? 1 : 0 }
                    order[place] = i
                }
            }
        }
    }

    func reason(
        for standing: WidgetStanding, state: StackState, limited: Set<Int>, grouped: Set<Int>, at time: Timestamp
    ) -> DecisionReason {
        let configuration = state.configuration
        let instance = state.instances[standing.index]
        if configuration.pinned == instance { return .pinned }
        if let swipe = state.manualSwipe(asOf: time, grace: settings.swipeGracePeriod), swipe.instance == instance {
            return .manualSwipe
        }
        if limited.contains(standing.index) { return .rotationLimited }
        if !configuration.smartRotate { return .userOrder }
        if standing.relevance > 0, standing.relevance >= standing.behaviour { return .relevance }
        switch standing.relevanceState.status {
        case .notRelevant: return .notRelevant
        case .expired: return .expired
        case .none, .relevant: break
        }
        // Engagement leads when its share is positive and above every other behaviour signal's, and the user did
        // engage with this widget (a tap or a swipe to it): otherwise the share is what the user opened after
        // looking at the stack, which is behaviour.
        let engagement = standing.contributions.share(at: Signal.engagement.index)
        guard engagement > 0, (instances.slots[Int(standing.slot)]?.engagement.decayed(at: time).taps ?? 0) >= 0.01
        else { return .behaviour }
        for index in 0..<SignalShares.capacity where index != Signal.engagement.index && index != Signal.relevance.index
        {
            if standing.contributions.share(at: index) >= engagement { return .behaviour }
        }
        return .engagement
    }

    /// Scales each widget's behaviour by its engagement (`WidgetEngagement.factor`), normalises the widgets
    /// again, and adds each factor's log against the stack's mean to the widget's `engagement` share.
    func applyEngagement(at time: Timestamp, to standings: inout [WidgetStanding]) {
        let n = standings.count
        var factors = [Double](repeating: 1, count: n)
        var engaged = false
        for i in 0..<n {
            guard let engagement = instances.slots[Int(standings[i].slot)]?.engagement, !engagement.isEmpty else {
                continue
            }
            factors[i] = engagement.factor(at: time)
            engaged = true
        }
        guard engaged else { return }
        var adjusted = (0..<n).map { standings[$0].behaviour * factors[$0] }
        // A widget swiped away goes below every widget that is not: at most half the lowest of theirs.
        var demoted: [Int] = []
        for i in 0..<n where instances.slots[Int(standings[i].slot)]?.engagement.isDemoted(at: time) == true {
            demoted.append(i)
        }
        if !demoted.isEmpty, demoted.count < n {
            var lowest = Double.infinity
            for i in 0..<n where !demoted.contains(i) { lowest = min(lowest, adjusted[i]) }
            for i in demoted where adjusted[i] > lowest / 2 {
                adjusted[i] = lowest / 2
                factors[i] = standings[i].behaviour > 0 ? adjusted[i] / standings[i].behaviour : factors[i]
            }
        }
        var total = 0.0
        for i in 0..<n { total += adjusted[i] }
        guard total > 0 else { return }
        var meanLog = 0.0
        for i in 0..<n { meanLog += safeLog(factors[i]) / Double(n) }
        for i in 0..<n {
            standings[i].behaviour = adjusted[i] / total
            standings[i].engagementFactor = factors[i]
            let share = safeLog(factors[i]) - meanLog
            guard share != 0 else { continue }
            standings[i].contributions[.engagement] = (standings[i].contributions[.engagement] ?? 0) + share
        }
    }

    /// How long a candidate may be suggested after its last donation.
    public static let suggestionLifetime = 86_400.0

    /// How many of `rotations` fall in the 24 hours up to `time` (none after it).
    static func rotationsInDay(_ rotations: [Timestamp], before time: Timestamp) -> Int {
        rotations.count { rotation in
            let age = time.seconds(since: rotation)
            return age >= 0 && age < 86_400
        }
    }

    /// The most candidates a stack's decision scores, and the most of one app among them.
    static let suggestionsScored = 3
    static let suggestionsScoredPerApp = 2

    /// Candidate keys that may be suggested in a stack at `time`: donated to in the 24 hours up to `time`, of a
    /// kind that fits the stack's family, not placed in it, and not in a relevance group with one of its widgets;
    /// the `suggestionsScored` last used, at most `suggestionsScoredPerApp` of one app (the three last donated to
    /// over all apps, by arrival, let one app's three backdated donations push every other app's suggestion out), for
    /// the model to choose from. Three, as before: each candidate is one more row for the model to score at every
    /// decision (eight cost a 10-widget query 4 µs more, `make bench`).
    func suggestionCandidates(for state: StackState, at time: Timestamp) -> [Int32] {
        guard !suggestionCandidates.isEmpty else { return [] }
        let placed = Set(state.keys)
        let groups = Set(
            state.slots.indices.compactMap { index in
                instances.slots[Int(state.slots[index])]?.group.map { "\(state.kinds[index].app)\u{0}\($0)" }
            })
        let dismissed = Set(state.dismissedSuggestions.lazy.filter { time < $0.until }.map(\.key))
        var result: [Int32] = []
        var perApp: [AppID: Int] = [:]
        for key in suggestionCandidates.reversed() where !placed.contains(key) && !dismissed.contains(key) {
            // Mostly in the order of last use (a candidate placed in another stack keeps its place when used again),
            // so every candidate is looked at, as before, not only those up to the first one too old.
            guard let lastUse = usage.lastUse(of: key) else { continue }
            let age = Double(time.microseconds - lastUse) / 1_000_000
            let info = keys[Int(key)]
            guard age >= 0, age < Self.suggestionLifetime, let kind = kinds[info.kind],
                kind.families.contains(state.configuration.family),
                perApp[info.kind.app, default: 0] < Self.suggestionsScoredPerApp
            else { continue }
            if let group = keyRelevance[key]?.group, groups.contains("\(info.kind.app)\u{0}\(group)") { continue }
            result.append(key)
            perApp[info.kind.app, default: 0] += 1
            if result.count == Self.suggestionsScored { break }
        }
        return result
    }

    /// `suggestion:APP/KIND[?name=value&…]`: readable and stable (see `Configuration.queryText`).
    func suggestionID(_ key: Int32) -> String {
        let info = keys[Int(key)]
        let configuration = info.configuration.queryText
        return Self.suggestionPrefix + "\(info.kind)" + (configuration.isEmpty ? "" : "?\(configuration)")
    }

    /// What every suggestion entry's id starts with.
    static let suggestionPrefix = "suggestion:"

    /// The candidate key a suggestion entry's id names, if it is a candidate not placed in the stack (whether or
    /// not it is shown now: an engagement may come after the suggestion left).
    func suggestionKey(named instance: InstanceID, in state: StackState) -> Int32? {
        guard instance.rawValue.hasPrefix(Self.suggestionPrefix) else { return nil }
        let placed = Set(state.keys)
        return suggestionCandidates.last { !placed.contains($0) && suggestionID($0) == instance.rawValue }
    }
}
