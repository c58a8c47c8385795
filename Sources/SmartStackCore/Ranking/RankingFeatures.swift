/// The signals the behaviour ranker combines, each a column of the feature matrix.
///
/// Every feature is scale-free (ranks, shares of the stack, logarithms of ratios), so the same learned
/// weights mean the same thing for a heavy and a light user.
enum Feature: Int, CaseIterable {
    // Recency: the widget's place in most-recently-used order, and how that interacts with the idle gap.
    case mostRecent, secondRecent, thirdRecent, fourthOrFifthRecent
    case mostRecentTimesGap, secondRecentTimesGap, timeSinceUse
    case mostRecentTimesPreviousDwell, secondRecentTimesPreviousDwell
    /// How long ago the widget's app left the front (another app came), for widgets not in front.
    case sinceLeftFront
    /// The widget's last stay in front was under 2 s, or 2–10 s (a glance: often not what the user wants back).
    case shortStay, briefStay
    /// This user's decayed share of looks whose target had this widget's recency class in this idle-gap bucket
    /// (`UsageModel.recencyByGap`), as a log-probability of the widget.
    case recencyInGap
    /// The idle gap since the last donation in `GapBucket`'s ten log-spaced buckets, crossed with the widget
    /// being the most, second and third most recent: whether the user resumes or switches depends on both.
    case first0, first1, first2, first3, first4, first5, first6, first7, first8, first9
    case second0, second1, second2, second3, second4, second5, second6, second7, second8, second9
    case third0, third1, third2, third3, third4, third5, third6, third7, third8, third9
    /// How the app in front was reached (`ReachBucket`: straight from another app, or how long after a look at a
    /// stack), crossed with the widget being the most or the second most recent: an app chosen seconds after
    /// looking is usually resumed; one that flashed up right after a look, or came from another app, less so.
    case firstReach0, firstReach1, firstReach2, firstReach3, firstReach4, firstReach5
    case secondReach0, secondReach1, secondReach2, secondReach3, secondReach4, secondReach5
    // Frequency at three time scales.
    case frequencyHours, frequencyDays, frequencyWeeks
    case timeOfDay, dayOfWeek
    // Sequence: what follows the last and the previous app, and whether the widget is what most often follows
    // the last app.
    case afterLastApp, afterPreviousApp, topAfterLastApp
    // Looks at stacks: what the user went to after looking, in general and after the same last app.
    case afterLook, afterLookFromLastApp, topAfterLookFromLastApp
    case previousLookTarget, previousLookTargetSecond, previousLookTargetFirst
    /// What follows a look in this context (last apps and idle gap), against what follows looks in general; and
    /// whether the widget is the back-off's first choice (a linear model cannot tell "largest" from a share).
    case afterLookInContext, topAfterLookInContext
    // Engagement reported by the shell.
    case taps, swipesTo, swipesAway
    case context
    case userOrder

    /// The number of features, as a literal so that loops over a row have a width the compiler knows (a test
    /// checks it against `allCases`).
    static let count = 76

    /// The columns of the gap-bucket indicators of the most recent widget (`GapBucket.count` of them, then as
    /// many for the second and the third most recent).
    static let gapColumns = Feature.first0.rawValue

    /// The columns of the reach indicators of the most recent widget (`ReachBucket.count`, then as many for the
    /// second most recent).
    static let reachColumns = Feature.firstReach0.rawValue

    /// The signal family this feature belongs to, as shown in decision contributions.
    var signal: Signal {
        switch self {
        case .frequencyHours, .frequencyDays, .frequencyWeeks: .frequency
        case .timeOfDay: .timeOfDay
        case .dayOfWeek: .dayOfWeek
        case .afterLastApp, .afterPreviousApp, .topAfterLastApp: .lastApp
        case .afterLook, .afterLookFromLastApp, .topAfterLookFromLastApp, .previousLookTarget,
            .previousLookTargetSecond, .previousLookTargetFirst, .afterLookInContext, .topAfterLookInContext,
            .taps, .swipesTo, .swipesAway:
            .engagement
        case .context: .context
        case .userOrder: .userOrder
        default:
            // Everything before `frequencyHours`: the recency features.
            .recency
        }
    }
}

/// The idle gap since the last donation, in ten log-spaced buckets with upper bounds 0.2, 1, 2, 5, 10, 30, 60,
/// 300 and 3,600 s (and one beyond). On phones a look a fraction of a second after an app came is mostly the
/// same app again (a launcher flash), one or two seconds after is mostly a switch, minutes to an hour later
/// mostly a resume: the buckets keep these apart while staying scale-free (no unit but the second).
enum GapBucket {
    static let count = 10
    /// Upper bounds in microseconds.
    static let bounds: [Int64] = [
        200_000, 1_000_000, 2_000_000, 5_000_000, 10_000_000, 30_000_000, 60_000_000,
        300_000_000, 3_600_000_000,
    ]

    /// The bucket of a gap in microseconds; no donation yet is the last bucket.
    @inline(__always)
    static func of(_ gap: Int64?) -> Int {
        guard let gap else { return count - 1 }
        var bucket = 0
        for bound in bounds { bucket += gap >= bound ? 1 : 0 }
        return bucket
    }
}

/// How the app in front was reached: 0 straight from another app (no look at a stack in between), then the time
/// from the latest look to the app's donation in buckets with upper bounds 0.2, 1, 3 and 10 s, and one beyond.
enum ReachBucket {
    static let count = 6
    static let direct: Int8 = 0
    static let bounds: [Int64] = [200_000, 1_000_000, 3_000_000, 10_000_000]

    /// The bucket of a donation at `now` by an app, the previous donation having been at `previous` and the latest
    /// look at `look`.
    static func of(now: Int64, previous: Int64?, look: Int64?) -> Int8 {
        guard let look, look <= now, look >= (previous ?? .min) else { return direct }
        var bucket: Int8 = 1
        for bound in bounds { bucket += now - look >= bound ? 1 : 0 }
        return bucket
    }
}

/// The recency classes of `UsageModel.recencyByGap`: most, second and third most recent, fourth or fifth, and
/// the rest (including widgets never used).
enum RecencyClass {
    static let count = 5

    /// The class of a 0-based most-recently-used rank (`Int.max`: never used).
    @inline(__always)
    static func of(rank: Int) -> Int { rank < 3 ? rank : rank < 5 ? 3 : 4 }

    /// The recency class and the gap bucket a look's matrix row had, read from its indicator columns; `nil`
    /// when no widget of the stack had been used (every widget in the last class: nothing to learn).
    static func ofRow(_ row: Int, in matrix: [Double], rows: Int) -> (recency: Int, gap: Int)? {
        let width = Feature.count
        guard row >= 0, row < rows, matrix.count >= rows * width else { return nil }
        var gap: Int?
        for other in 0..<rows where matrix[other * width + Feature.mostRecent.rawValue] == 1 {
            for bucket in 0..<GapBucket.count where matrix[other * width + Feature.gapColumns + bucket] == 1 {
                gap = bucket
            }
        }
        guard let gap else { return nil }
        let base = row * width
        let recency =
            matrix[base + Feature.mostRecent.rawValue] == 1
            ? 0
            : matrix[base + Feature.secondRecent.rawValue] == 1
                ? 1
                : matrix[base + Feature.thirdRecent.rawValue] == 1
                    ? 2
                    : matrix[base + Feature.fourthOrFifthRecent.rawValue] == 1 ? 3 : 4
        return (recency, gap)
    }
}

/// A family of ranking signals; the keys of a decision entry's `contributions`.
public enum Signal: String, Sendable, Hashable, CaseIterable, Codable {
    case recency, frequency, timeOfDay, dayOfWeek, lastApp, engagement, context, userOrder
    /// Timeline relevance and relevant contexts declared by the provider.
    case relevance
    /// The stack is ordered by a simple ranker (most recent, most frequent, frecency, most frequent this hour)
    /// that has recently predicted this user's choices better than the learned model (`RankerSelector`): its
    /// share is the whole of the widget's log-odds against the stack's average widget.
    case fallbackMRU, fallbackMFU, fallbackFrecency, fallbackHourMFU

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
        case .fallbackMRU: 9
        case .fallbackMFU: 10
        case .fallbackFrecency: 11
        case .fallbackHourMFU: 12
        }
    }

    public static func == (lhs: Signal, rhs: Signal) -> Bool { lhs.index == rhs.index }
    public func hash(into hasher: inout Hasher) { hasher.combine(index) }
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
    /// The usage keys of the stack's widgets, in the user's order, then any suggestion candidates.
    var keys: [Int32]
    var time: Timestamp
    /// The context pairs in force now.
    var contextPairs: [Int32]
    /// The key the user went to after the previous look at this stack.
    var previousLookTarget: Int32?
    /// How many of `keys`, from the first, are the stack's widgets (all when `nil`). Features relative to the
    /// stack (recency ranks, shares, a back-off's first choice) are taken over the widgets alone, and each
    /// candidate after them is placed against the widgets: so the widgets' rows are the same with or without
    /// candidates, the rows a look records and the ranker learns from.
    var widgets: Int? = nil
}
