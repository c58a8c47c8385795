#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The signals the behaviour ranker combines, each a column of the feature matrix.
///
/// Every feature is scale-free (ranks, shares of the stack, logarithms of ratios), so the same learned
/// weights mean the same thing for a heavy and a light user.
enum Feature: Int, CaseIterable {
    // Recency: the widget's place in most-recently-used order, and how that interacts with the idle gap.
    case mostRecent, secondRecent, thirdRecent, fourthOrFifthRecent
    case mostRecentTimesGap, secondRecentTimesGap, timeSinceUse
    case mostRecentTimesPreviousDwell, secondRecentTimesPreviousDwell
    case mostRecentShortGap, mostRecentMediumGap, mostRecentLongGap, mostRecentVeryLongGap
    case secondShortGap, secondMediumGap, secondLongGap, secondVeryLongGap
    case thirdShortGap, thirdMediumGap, thirdLongGap, thirdVeryLongGap
    // Frequency at three time scales.
    case frequencyHours, frequencyDays, frequencyWeeks
    case timeOfDay, dayOfWeek
    // Sequence: what follows the last and the previous app.
    case afterLastApp, afterPreviousApp
    // Looks at stacks: what the user went to after looking, in general and after the same last app.
    case afterLook, afterLookFromLastApp
    case previousLookTarget, previousLookTargetSecond, previousLookTargetFirst
    /// What follows a look in this context (last apps and idle gap), against what follows looks in general.
    case afterLookInContext
    // Engagement reported by the shell.
    case taps, swipesTo, swipesAway
    case context
    case userOrder

    static let count = allCases.count

    /// The signal family this feature belongs to, as shown in decision contributions.
    var signal: Signal {
        switch self {
        case .mostRecent, .secondRecent, .thirdRecent, .fourthOrFifthRecent, .mostRecentTimesGap,
            .secondRecentTimesGap, .timeSinceUse, .mostRecentTimesPreviousDwell, .secondRecentTimesPreviousDwell,
            .mostRecentShortGap, .mostRecentMediumGap, .mostRecentLongGap, .mostRecentVeryLongGap,
            .secondShortGap, .secondMediumGap, .secondLongGap, .secondVeryLongGap,
            .thirdShortGap, .thirdMediumGap, .thirdLongGap, .thirdVeryLongGap:
            .recency
        case .frequencyHours, .frequencyDays, .frequencyWeeks: .frequency
        case .timeOfDay: .timeOfDay
        case .dayOfWeek: .dayOfWeek
        case .afterLastApp, .afterPreviousApp: .lastApp
        case .afterLook, .afterLookFromLastApp, .previousLookTarget, .previousLookTargetSecond,
            .previousLookTargetFirst, .afterLookInContext, .taps, .swipesTo, .swipesAway:
            .engagement
        case .context: .context
        case .userOrder: .userOrder
        }
    }
}

/// A family of ranking signals; the keys of a decision entry's `contributions`.
public enum Signal: String, Sendable, Hashable, CaseIterable, Codable {
    case recency, frequency, timeOfDay, dayOfWeek, lastApp, engagement, context, userOrder
    /// Timeline relevance and relevant contexts declared by the provider.
    case relevance

    /// A dense index, so hashing and comparing a signal never touches its string.
    var index: Int {
        switch self {
        case .recency: 0
        case .frequency: 1
        case .timeOfDay: 2
        case .dayOfWeek: 3
        case .lastApp: 4
        case .engagement: 5
        case .context: 6
        case .userOrder: 7
        case .relevance: 8
        }
    }

    public static func == (lhs: Signal, rhs: Signal) -> Bool { lhs.index == rhs.index }
    public func hash(into hasher: inout Hasher) { hasher.combine(index) }

    static let byIndex: [Signal] = allCases.sorted { $0.index < $1.index }
}

extension Feature {
    /// The signal index of every feature, by feature index.
    static let signalIndex: [Int] = allCases.map(\.signal.index)

    /// The features in runs of consecutive columns of one signal, in column order.
    static let signalRuns: [(signal: Int, columns: Range<Int>)] = {
        var runs: [(signal: Int, columns: Range<Int>)] = []
        for (column, signal) in signalIndex.enumerated() {
            if let last = runs.last, last.signal == signal, last.columns.upperBound == column {
                runs[runs.count - 1].columns = last.columns.lowerBound..<(column + 1)
            } else {
                runs.append((signal, column..<(column + 1)))
            }
        }
        return runs
    }()
}

/// Inputs for computing the feature matrix of one stack at one time.
struct FeatureQuery {
    /// The usage keys of the stack's widgets, in the user's order.
    var keys: [Int32]
    var time: Timestamp
    /// The context pairs in force now.
    var contextPairs: [Int32]
    /// The key the user went to after the previous look at this stack.
    var previousLookTarget: Int32?
}

/// Natural logarithm, guarded so that a zero share gives a large negative number and never `-inf`.
@inline(__always)
func safeLog(_ x: Double) -> Double { log(max(x, 1e-9)) }

/// Columns of the raw per-widget values a feature matrix is computed from (column-major scratch).
private enum RawColumn {
    /// Decayed donation counts at the three count scales (3 columns).
    static let frequency = 0
    static let timeOfDay = 3
    static let dayOfWeek = 4
    static let afterLook = 5
    static let afterLookFromLast = 6
    static let taps = 7
    static let swipesTo = 8
    static let swipesAway = 9
    static let context = 10
    /// What follows looks in general, then backed off through the look contexts.
    static let general = 11
    static let inContext = 12
    /// One context's outcome counts.
    static let outcomes = 13
    static let count = 14
}

extension UsageModel {
    /// The feature matrix (row-major, `keys.count × Feature.count`) for a stack at a time.
    ///
    /// Cost is linear in the stack's size and independent of the history's length: every count is a read of a
    /// flat row or one probe of a pair table, scaled by one decay factor per time constant; the only
    /// allocation is the matrix itself when `matrix` has no room (callers reuse it).
    func features(for query: FeatureQuery, into matrix: inout [Double]) {
        let n = query.keys.count
        matrix.removeAll(keepingCapacity: true)
        matrix.append(contentsOf: repeatElement(0, count: n * Feature.count))
        guard n > 0 else { return }
        matrix.withUnsafeMutableBufferPointer { matrix in
            query.keys.withUnsafeBufferPointer { keys in
                withUnsafeTemporaryAllocation(of: Double.self, capacity: n * RawColumn.count) { raw in
                    fillFeatures(query, keys: keys, raw: raw, matrix: matrix)
                }
            }
        }
    }

    private func fillFeatures(
        _ query: FeatureQuery, keys: UnsafeBufferPointer<Int32>, raw: UnsafeMutableBufferPointer<Double>,
        matrix: UnsafeMutableBufferPointer<Double>
    ) {
        let n = keys.count
        let width = Feature.count
        let now = query.time.microseconds
        let decay = clock.factors(at: now)
        raw.initialize(repeating: 0)

        // Raw decayed counts, one column per signal.
        let hour = query.time.localHour
        let before = (hour + 23) % 24
        let after = (hour + 1) % 24
        let weekday = query.time.localWeekday
        let hourDecay = decay[Self.hourScale]
        let engagementDecay = decay[Self.engagementScale]
        let transitionDecay = decay[Self.afterViewTransitionScale]
        let contextDecay = decay[Self.contextScale]
        counters.withUnsafeBufferPointer { counters in
            for i in 0..<n {
                let key = keys[i]
                if let lastApp {
                    raw[RawColumn.afterLookFromLast * n + i] =
                        afterViewTransitions.sum(Self.pair(lastApp, key)) * transitionDecay
                }
                if !query.contextPairs.isEmpty {
                    var total = 0.0
                    for pair in query.contextPairs { total += contextCounts.sum(Self.pair(pair, key)) * contextDecay }
                    raw[RawColumn.context * n + i] = total
                }
                guard key >= 0, Int(key) < keyCount else { continue }
                let row = Int(key) * KeyCounter.width
                for (scale, tau) in Self.countScales.enumerated() {
                    raw[(RawColumn.frequency + scale) * n + i] = counters[row + KeyCounter.counts + scale] * decay[tau]
                }
                let hours = row + KeyCounter.hours
                raw[RawColumn.timeOfDay * n + i] =
                    counters[hours + hour] * hourDecay + 0.5 * (counters[hours + before] * hourDecay)
                    + 0.5 * (counters[hours + after] * hourDecay)
                raw[RawColumn.dayOfWeek * n + i] = counters[row + KeyCounter.weekdays + weekday] * decay[Self.weekdayScale]
                raw[RawColumn.afterLook * n + i] = counters[row + KeyCounter.afterView] * decay[Self.afterViewScale]
                raw[RawColumn.taps * n + i] = counters[row + KeyCounter.taps] * engagementDecay
                raw[RawColumn.swipesTo * n + i] = counters[row + KeyCounter.swipesTo] * engagementDecay
                raw[RawColumn.swipesAway * n + i] = counters[row + KeyCounter.swipesAway] * engagementDecay
                raw[RawColumn.general * n + i] = counters[row + KeyCounter.afterLookLong] * decay[Self.lookContextScale]
            }
        }

        // Each widget's share of the stack, with a prior per widget for the sparse signals.
        func shares(_ column: Int, prior: Double = 0) {
            let base = column * n
            var total = 0.0
            for i in 0..<n { total += raw[base + i] }
            total += prior * Double(n)
            for i in 0..<n { raw[base + i] = total > 0 ? (raw[base + i] + prior) / total : 1 / Double(n) }
        }
        for scale in Self.countScales.indices { shares(RawColumn.frequency + scale) }
        shares(RawColumn.timeOfDay)
        shares(RawColumn.dayOfWeek)
        shares(RawColumn.afterLook, prior: 0.1)
        shares(RawColumn.afterLookFromLast, prior: 0.1)
        shares(RawColumn.taps, prior: 0.5)
        shares(RawColumn.swipesTo, prior: 0.5)
        if query.contextPairs.isEmpty {
            for i in 0..<n { raw[RawColumn.context * n + i] = 1 / Double(n) }
        } else {
            shares(RawColumn.context, prior: 0.5)
        }

        // What follows a look here: back off from looks in general through ever more specific contexts.
        shares(RawColumn.general, prior: 0.1)
        let inContext = RawColumn.inContext * n
        let outcomes = RawColumn.outcomes * n
        for i in 0..<n { raw[inContext + i] = raw[RawColumn.general * n + i] }
        let gap = lookGap(at: now)
        let lookDecay = decay[Self.lookContextScale]
        for level in 0..<LookContext.levels {
            let context = lookContext(level: level, gap: gap)
            var total = 0.0
            for i in 0..<n {
                let count = lookOutcomes.sum(LookOutcomeKey(context: context, key: keys[i])) * lookDecay
                raw[outcomes + i] = count
                total += count
            }
            for i in 0..<n { raw[inContext + i] = (raw[outcomes + i] + 2 * raw[inContext + i]) / (total + 2) }
        }

        // Sequence and recency state shared by every row.
        let transitionScale = decay[Self.transitionScale]
        let lastTotal = lastApp.map { transitionTotal(of: $0) * transitionScale } ?? 0
        let previousTotal = previousApp.map { transitionTotal(of: $0) * transitionScale } ?? 0
        let gapSeconds = lastTime.map { max(0, Double(now - $0) / 1_000_000) } ?? 1e9
        let logGap = log1p(gapSeconds / 60)
        let previousDwell = (lastTime != nil && previousTime != nil)
            ? log1p(max(0, Double((lastTime ?? 0) - (previousTime ?? 0)) / 1_000_000) / 60) / 3 : 0
        let gapBucket = gapSeconds < 60 ? 0 : gapSeconds < 600 ? 1 : gapSeconds < 14_400 ? 2 : 3

        for i in 0..<n {
            let key = keys[i]
            let base = i * width
            @inline(__always) func set(_ feature: Feature, _ value: Double) { matrix[base + feature.rawValue] = value }
            @inline(__always) func flag(_ condition: Bool) -> Double { condition ? 1 : 0 }
            @inline(__always) func value(_ column: Int) -> Double { raw[column * n + i] }
            // Most-recently-used rank among the stack's widgets (ties by the user's order); never used: none.
            let lastUse = lastUse(of: key)
            var r = Int.max
            if let lastUse {
                r = 0
                for j in 0..<n where j != i {
                    let other = self.lastUse(of: keys[j]) ?? .min
                    if other > lastUse || (other == lastUse && j < i) { r += 1 }
                }
            }
            set(.afterLookInContext, safeLog(raw[inContext + i] / value(RawColumn.general)))
            set(.mostRecent, flag(r == 0))
            set(.secondRecent, flag(r == 1))
            set(.thirdRecent, flag(r == 2))
            set(.fourthOrFifthRecent, flag(r == 3 || r == 4))
            set(.mostRecentTimesGap, flag(r == 0) * logGap)
            set(.secondRecentTimesGap, flag(r == 1) * logGap)
            let since = lastUse.map { max(0, Double(now - $0) / 1_000_000) } ?? 1e9
            set(.timeSinceUse, -log1p(since / 60) / 5)
            set(.mostRecentTimesPreviousDwell, flag(r == 0) * previousDwell)
            set(.secondRecentTimesPreviousDwell, flag(r == 1) * previousDwell)
            switch r {
            case 0: matrix[base + Feature.mostRecentShortGap.rawValue + gapBucket] = 1
            case 1: matrix[base + Feature.secondShortGap.rawValue + gapBucket] = 1
            case 2: matrix[base + Feature.thirdShortGap.rawValue + gapBucket] = 1
            default: break
            }
            let frequencyDays = value(RawColumn.frequency + 1)
            set(.frequencyHours, safeLog(value(RawColumn.frequency) + 1e-3))
            set(.frequencyDays, safeLog(frequencyDays + 1e-3))
            set(.frequencyWeeks, safeLog(value(RawColumn.frequency + 2) + 1e-3))
            set(.timeOfDay, safeLog(value(RawColumn.timeOfDay) + 1e-3))
            set(.dayOfWeek, safeLog(value(RawColumn.dayOfWeek) + 1e-3))
            let fromLast = lastApp.map { transitions.sum(Self.pair($0, key)) * transitionScale } ?? 0
            let fromPrevious = previousApp.map { transitions.sum(Self.pair($0, key)) * transitionScale } ?? 0
            let afterLast = (fromLast + 0.5 * frequencyDays) / (lastTotal + 0.5)
            let afterPrevious = (fromPrevious + 0.5 * frequencyDays) / (previousTotal + 0.5)
            set(.afterLastApp, safeLog(afterLast + 1e-3))
            set(.afterPreviousApp, safeLog(afterPrevious + 1e-3))
            set(.afterLook, safeLog(value(RawColumn.afterLook)))
            set(.afterLookFromLastApp, safeLog(value(RawColumn.afterLookFromLast)))
            let wasPreviousTarget = query.previousLookTarget == key
            set(.previousLookTarget, flag(wasPreviousTarget))
            set(.previousLookTargetSecond, flag(wasPreviousTarget && r == 1))
            set(.previousLookTargetFirst, flag(wasPreviousTarget && r == 0))
            set(.taps, safeLog(value(RawColumn.taps) * Double(n)))
            set(.swipesTo, safeLog(value(RawColumn.swipesTo) * Double(n)))
            set(.swipesAway, -log1p(value(RawColumn.swipesAway)))
            set(.context, safeLog(value(RawColumn.context) * Double(n)))
            set(.userOrder, 1 / Double(1 + i))
        }
    }

    /// The decayed sum of donations that followed `app`, at the clock's reference time.
    private func transitionTotal(of app: Int32) -> Double {
        app >= 0 && Int(app) < transitionTotals.count ? transitionTotals[Int(app)] : 0
    }
}
