#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The rankers a stack's order can come from: the learned model, or one of the simple rankers of
/// docs/usage-log.md (computed from the usage model's own counts) when it has recently done better for this
/// stack.
public enum StackRanker: Int, Sendable, Hashable, CaseIterable, Codable {
    /// The learned softmax model (`OnlineRanker`).
    case model
    /// Most recently used first.
    case mru
    /// Most often used first (every matching donation ever).
    case mfu
    /// Σ exp(−days/32) over matching donations, by local calendar day.
    case frecency
    /// Most often used in the current local hour of day, then `mfu`.
    case hourMFU

    /// The name used in explanations and logs (the evaluation's names for the simple rankers).
    public var name: String {
        switch self {
        case .model: "model"
        case .mru: "mru"
        case .mfu: "mfu"
        case .frecency: "frecency"
        case .hourMFU: "hour-mfu"
        }
    }

    /// The contribution that names this ranker when it decides a stack's order; `nil` for the model, whose
    /// own signals are the contributions.
    public var signal: Signal? {
        switch self {
        case .model: nil
        case .mru: .fallbackMRU
        case .mfu: .fallbackMFU
        case .frecency: .fallbackFrecency
        case .hourMFU: .fallbackHourMFU
        }
    }

    /// The simple rankers, in the order their ties are broken.
    static let fallbacks: [StackRanker] = [.mru, .mfu, .frecency, .hourMFU]
}

/// Chooses, per stack, which ranker orders it: the one that has recently predicted best what the user went
/// to after looking; ties go to the model.
///
/// After every look the stack learns from, each ranker's performance becomes
/// `perf ← exp(−1/τ)·perf + 1/rank(target)`: an exponentially weighted sum of reciprocal ranks over about the
/// last τ = 200 looks (its steady value is τ times the ranker's recent MRR). A simple ranker takes over when its
/// performance exceeds the model's; ties and the start (everything 0) go to the model. So the model decides
/// unless, for this person and stack, a simple ranker has been better over the last few hundred looks — and it
/// takes back over as soon as it catches up. τ is a round value: long enough that a few surprising looks do not
/// flip the choice (the noise of a sum of ~200 reciprocal ranks is several units), short enough to follow a
/// change of habits within weeks of use. There is no margin in the model's favour (there was one of one look's
/// credit): the fallback exists for the person whom a simple ranker serves as well as the model, and a margin
/// is what that person pays — on `desktop.tsv` sur-C, whose choices MRU predicts almost perfectly, was 0.0003
/// MRR below MRU with it and is 0.002 above without (docs/engine.md, "Meta fallback").
struct RankerSelector: Sendable, Hashable {
    static let memory = 200.0
    static let retention = exp(-1 / memory)
    /// How far a simple ranker must lead the model to take over: any lead at all.
    static let margin = 0.0

    /// Each ranker's decayed sum of reciprocal ranks, by `StackRanker.rawValue`.
    private(set) var performance = SIMD8<Double>(repeating: 0)

    init() {}

    /// A selector with these performances, by `StackRanker.rawValue` (for tests and restoring a snapshot).
    init(performance: SIMD8<Double>) { self.performance = performance }

    /// The ranker that orders the stack now.
    var choice: StackRanker {
        var best = StackRanker.model
        var bestValue = performance[StackRanker.model.rawValue]
        for ranker in StackRanker.fallbacks where performance[ranker.rawValue] - Self.margin > bestValue {
            best = ranker
            bestValue = performance[ranker.rawValue] - Self.margin
        }
        return best
    }

    /// The performance of one ranker.
    func performance(of ranker: StackRanker) -> Double { performance[ranker.rawValue] }

    /// Records one look: `ranks[ranker.rawValue]` is the 1-based rank the target had in that ranker's order.
    mutating func record(ranks: SIMD8<Double>) {
        for ranker in StackRanker.allCases {
            let lane = ranker.rawValue
            performance[lane] = Self.retention * performance[lane] + 1 / max(1, ranks[lane])
        }
    }
}

extension UsageModel {
    /// The scores of `keys` under a simple ranker at `time` (higher first; ties go to the user's order), read
    /// from the per-key counts: exactly the baselines of docs/usage-log.md over the donations matching each key.
    func fallbackScores(
        _ ranker: StackRanker, keys: [Int32], at time: Timestamp, into scores: UnsafeMutableBufferPointer<Double>
    ) {
        let n = keys.count
        precondition(scores.count >= n)
        func slot(_ i: Int, _ offset: Int) -> Double {
            let key = keys[i]
            return key >= 0 && Int(key) < keyCount ? counters[Int(key) * KeyCounter.width + offset] : 0
        }
        switch ranker {
        case .model:
            for i in 0..<n { scores[i] = 0 }
        case .mru:
            for i in 0..<n { scores[i] = lastUse(of: keys[i]).map { Double($0) } ?? -.infinity }
        case .mfu:
            for i in 0..<n { scores[i] = slot(i, KeyCounter.total) }
        case .frecency:
            for i in 0..<n { scores[i] = slot(i, KeyCounter.frecency) }
        case .hourMFU:
            // (same-hour count, total) in lexicographic order: counts are whole numbers, so one number holds both.
            var largest = 0.0
            for i in 0..<n { largest = max(largest, slot(i, KeyCounter.total)) }
            let hour = KeyCounter.totalHours + time.localHour
            for i in 0..<n { scores[i] = slot(i, hour) * (largest + 1) + slot(i, KeyCounter.total) }
        }
    }
}

/// The 0-based place of each of the first `n` scores in "highest first, ties in index order".
@inline(__always)
func placesByScore(_ scores: UnsafeBufferPointer<Double>, count n: Int, into places: UnsafeMutableBufferPointer<Int>) {
    for i in 0..<n {
        var place = 0
        for j in 0..<i { place += scores[j] >= scores[i] ? 1 : 0 }
        for j in (i + 1)..<n { place += scores[j] > scores[i] ? 1 : 0 }
        places[i] = place
    }
}
