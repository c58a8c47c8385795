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

    /// The number of features, as a literal so that loops over a row have a width the compiler knows (a test
    /// checks it against `allCases`).
    static let count = 39

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
