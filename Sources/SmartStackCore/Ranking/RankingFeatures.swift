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

extension UsageModel {
    /// The feature matrix (row-major, `keys.count × Feature.count`) for a stack at a time.
    ///
    /// Cost is linear in the stack's size and independent of the history's length.
    func features(for query: FeatureQuery, into matrix: inout [Double]) {
        let n = query.keys.count
        let width = Feature.count
        matrix.removeAll(keepingCapacity: true)
        matrix.append(contentsOf: repeatElement(0, count: n * width))
        guard n > 0 else { return }
        let now = query.time.microseconds
        let empty = KeyUsage()
        // Read each key's aggregates in place; copying them would retain and release their arrays.
        func withUsage(_ i: Int, _ body: (borrowing KeyUsage) -> Double) -> Double {
            let key = Int(query.keys[i])
            return key < keys.count ? body(keys[key]) : body(empty)
        }

        // Most-recently-used ranks among the stack's widgets (ties by the user's order).
        let lastUses: [Int64?] = query.keys.map { Int($0) < keys.count ? keys[Int($0)].lastUse : nil }
        var byRecency = Array(0..<n)
        byRecency.sort { a, b in
            let la = lastUses[a] ?? Int64.min
            let lb = lastUses[b] ?? Int64.min
            return la != lb ? la > lb : a < b
        }
        var rank = Array(repeating: Int.max, count: n)
        for (position, index) in byRecency.enumerated() where lastUses[index] != nil { rank[index] = position }

        let gap = lastTime.map { max(0, Double(now - $0) / 1_000_000) } ?? 1e9
        let logGap = log1p(gap / 60)
        let previousDwell = (lastTime != nil && previousTime != nil)
            ? log1p(max(0, Double((lastTime ?? 0) - (previousTime ?? 0)) / 1_000_000) / 60) / 3 : 0
        let gapBucket = gap < 60 ? 0 : gap < 600 ? 1 : gap < 14_400 ? 2 : 3

        func shares(_ values: [Double], prior: Double = 0) -> [Double] {
            let total = values.reduce(0, +) + prior * Double(n)
            return total > 0 ? values.map { ($0 + prior) / total } : Array(repeating: 1 / Double(n), count: n)
        }
        let frequency = UsageModel.countTaus.indices.map { scale in
            shares((0..<n).map { i in withUsage(i) { $0.counts[scale].value(at: now, tau: UsageModel.countTaus[scale]) } })
        }
        let hour = query.time.localHour
        let timeOfDay = shares((0..<n).map { i in
            withUsage(i) { u in
                u.hours[hour].value(at: now, tau: UsageModel.hourTau)
                    + 0.5 * u.hours[(hour + 23) % 24].value(at: now, tau: UsageModel.hourTau)
                    + 0.5 * u.hours[(hour + 1) % 24].value(at: now, tau: UsageModel.hourTau)
            }
        })
        let weekday = query.time.localWeekday
        let dayOfWeek = shares((0..<n).map { i in withUsage(i) { $0.weekdays[weekday].value(at: now, tau: UsageModel.weekdayTau) } })
        let lastTotal = transitionTotal(from: lastApp, at: now)
        let previousTotal = transitionTotal(from: previousApp, at: now)
        let afterLook = shares((0..<n).map { i in withUsage(i) { $0.afterView.value(at: now, tau: UsageModel.afterViewTau) } }, prior: 0.1)
        let afterLookFromLast = shares(
            query.keys.map { afterViewTransition(from: lastApp, to: $0, at: now) }, prior: 0.1)
        let taps = shares((0..<n).map { i in withUsage(i) { $0.taps.value(at: now, tau: UsageModel.engagementTau) } }, prior: 0.5)
        let swipesTo = shares((0..<n).map { i in withUsage(i) { $0.swipesTo.value(at: now, tau: UsageModel.engagementTau) } }, prior: 0.5)
        let swipesAway = (0..<n).map { i in withUsage(i) { $0.swipesAway.value(at: now, tau: UsageModel.engagementTau) } }
        let context = query.contextPairs.isEmpty ? Array(repeating: 1 / Double(n), count: n) : shares((0..<n).map { i in
            withUsage(i) { u in
                query.contextPairs.reduce(0) { $0 + (u.contexts[$1]?.value(at: now, tau: UsageModel.contextTau) ?? 0) }
            }
        }, prior: 0.5)

        // What follows a look here: back off from looks in general through ever more specific contexts.
        let general = shares((0..<n).map { i in withUsage(i) { $0.afterLookLong.value(at: now, tau: UsageModel.lookContextTau) } },
                             prior: 0.1)
        var inContext = general
        for context in lookContexts(at: now) {
            let counts = query.keys.map { key in
                lookOutcomes[LookOutcomeKey(context: context, key: key)]?.value(at: now, tau: UsageModel.lookContextTau) ?? 0
            }
            let total = counts.reduce(0, +)
            for i in 0..<n { inContext[i] = (counts[i] + 2 * inContext[i]) / (total + 2) }
        }

        for i in 0..<n {
            let key = query.keys[i]
            matrix[i * width + Feature.afterLookInContext.rawValue] = safeLog(inContext[i] / general[i])
            let r = rank[i]
            let base = i * width
            @inline(__always) func set(_ feature: Feature, _ value: Double) { matrix[base + feature.rawValue] = value }
            @inline(__always) func flag(_ condition: Bool) -> Double { condition ? 1 : 0 }
            set(.mostRecent, flag(r == 0))
            set(.secondRecent, flag(r == 1))
            set(.thirdRecent, flag(r == 2))
            set(.fourthOrFifthRecent, flag(r == 3 || r == 4))
            set(.mostRecentTimesGap, flag(r == 0) * logGap)
            set(.secondRecentTimesGap, flag(r == 1) * logGap)
            let since = lastUses[i].map { max(0, Double(now - $0) / 1_000_000) } ?? 1e9
            set(.timeSinceUse, -log1p(since / 60) / 5)
            set(.mostRecentTimesPreviousDwell, flag(r == 0) * previousDwell)
            set(.secondRecentTimesPreviousDwell, flag(r == 1) * previousDwell)
            if r <= 2 {
                let first: [Feature] = [.mostRecentShortGap, .secondShortGap, .thirdShortGap]
                matrix[base + first[r].rawValue + gapBucket] = 1
            }
            set(.frequencyHours, safeLog(frequency[0][i] + 1e-3))
            set(.frequencyDays, safeLog(frequency[1][i] + 1e-3))
            set(.frequencyWeeks, safeLog(frequency[2][i] + 1e-3))
            set(.timeOfDay, safeLog(timeOfDay[i] + 1e-3))
            set(.dayOfWeek, safeLog(dayOfWeek[i] + 1e-3))
            let afterLast = (transition(from: lastApp, to: key, at: now) + 0.5 * frequency[1][i]) / (lastTotal + 0.5)
            let afterPrevious = (transition(from: previousApp, to: key, at: now) + 0.5 * frequency[1][i])
                / (previousTotal + 0.5)
            set(.afterLastApp, safeLog(afterLast + 1e-3))
            set(.afterPreviousApp, safeLog(afterPrevious + 1e-3))
            set(.afterLook, safeLog(afterLook[i]))
            set(.afterLookFromLastApp, safeLog(afterLookFromLast[i]))
            let wasPreviousTarget = query.previousLookTarget == key
            set(.previousLookTarget, flag(wasPreviousTarget))
            set(.previousLookTargetSecond, flag(wasPreviousTarget && r == 1))
            set(.previousLookTargetFirst, flag(wasPreviousTarget && r == 0))
            set(.taps, safeLog(taps[i] * Double(n)))
            set(.swipesTo, safeLog(swipesTo[i] * Double(n)))
            set(.swipesAway, -log1p(swipesAway[i]))
            set(.context, safeLog(context[i] * Double(n)))
            set(.userOrder, 1 / Double(1 + i))
        }
    }
}
