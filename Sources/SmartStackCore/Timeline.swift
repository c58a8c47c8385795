/// How relevant a timeline entry says its widget is: a score on the provider's own scale and a duration.
///
/// Only the ratio of a score to the same widget's other scores matters (see ``RelevanceTracker``).
public struct Relevance: Hashable, Sendable {
    /// The provider's score; `<= 0` means "not relevant".
    public var score: Double
    /// Seconds the relevance lasts from the entry's date, `>= 0`; `0` means "until the next entry with a relevance".
    public var duration: Double

    /// A relevance of `score` lasting `duration` seconds (`0`: until the next entry with a relevance).
    public init(score: Double, duration: Double = 0) {
        self.score = score
        self.duration = duration
    }
}

/// One entry of a timeline: it becomes current at `date`.
public struct TimelineEntry: Hashable, Sendable {
    /// When the entry becomes current.
    public var date: Timestamp
    /// The entry's relevance; `nil` keeps the previous relevance in force.
    public var relevance: Relevance?

    /// An entry current from `date`, with an optional relevance.
    public init(date: Timestamp, relevance: Relevance? = nil) {
        self.date = date
        self.relevance = relevance
    }
}

/// When the service asks the provider for a new timeline.
public enum ReloadPolicy: Hashable, Sendable {
    /// After the last entry's date (the default).
    case atEnd
    /// At a fixed date.
    case after(Timestamp)
    /// Only when the provider asks for reloads itself.
    case never

    /// When a reload falls due for a timeline whose last entry is at `lastEntryDate`; `nil` for `never`.
    public func dueDate(lastEntryDate: Timestamp) -> Timestamp? {
        switch self {
        case .atEnd: lastEntryDate
        case .after(let date): date
        case .never: nil
        }
    }
}

/// A validated timeline: at least one entry, sorted by date, with finite relevances.
///
/// The only way to make one is ``validated(entries:policy:maxEntries:)``, so every `Timeline` holds its
/// invariants and the code that consumes it (``RelevanceTracker``, ``ReloadScheduler``) need not recheck them.
public struct Timeline: Hashable, Sendable {
    /// The entries by date; entries with the same date keep their submitted order.
    public let entries: [TimelineEntry]
    /// When to ask for the next timeline.
    public let policy: ReloadPolicy

    /// The default upper bound on the number of entries in one timeline.
    public static let defaultMaxEntries = 1_000
    /// Entries closer together than this (seconds) are accepted with a warning.
    public static let minimumSpacing = 300.0

    private init(entries: [TimelineEntry], policy: ReloadPolicy) {
        self.entries = entries
        self.policy = policy
    }

    /// The date of the last entry.
    public var lastEntryDate: Timestamp {
        // `validated` rejects empty timelines, so the last index exists.
        entries[entries.count - 1].date
    }

    /// When this timeline's policy asks for a reload; `nil` for `never`.
    public var reloadDate: Timestamp? { policy.dueDate(lastEntryDate: lastEntryDate) }

    /// Checks and sorts submitted entries, returning the timeline and warnings for the reply.
    ///
    /// Errors name the offending parameter by its submitted index (`entries[3].relevance.score`): the timeline
    /// must be non-empty, hold at most `maxEntries` entries, and every relevance must have a finite score and a
    /// finite, non-negative duration. Entries less than ``minimumSpacing`` seconds apart are accepted, with one
    /// warning per such pair naming both submitted indexes.
    public static func validated(
        entries: [TimelineEntry], policy: ReloadPolicy, maxEntries: Int = defaultMaxEntries
    ) throws(CoreError) -> (timeline: Timeline, warnings: [String]) {
        guard !entries.isEmpty else {
            throw .invalidParameter(parameter: "entries", reason: "a timeline needs at least one entry")
        }
        guard entries.count <= maxEntries else {
            throw .limitExceeded(limit: "maxTimelineEntries", maximum: maxEntries)
        }
        for (index, entry) in entries.enumerated() {
            guard let relevance = entry.relevance else { continue }
            guard relevance.score.isFinite else {
                throw .invalidParameter(
                    parameter: "entries[\(index)].relevance.score", reason: "must be a finite number")
            }
            guard relevance.duration.isFinite, relevance.duration >= 0 else {
                throw .invalidParameter(
                    parameter: "entries[\(index)].relevance.duration", reason: "must be a finite number >= 0")
            }
        }
        // Sort by (date, submitted index): the standard library does not promise a stable sort, and the
        // order of same-date entries decides which relevance is in force.
        let order = entries.indices.sorted { lhs, rhs in
            entries[lhs].date != entries[rhs].date ? entries[lhs].date < entries[rhs].date : lhs < rhs
        }
        var warnings: [String] = []
        for (previous, next) in zip(order, order.dropFirst()) {
            let gap = entries[next].date.seconds(since: entries[previous].date)
            if gap < minimumSpacing {
                warnings.append(
                    "entries[\(previous)] and entries[\(next)] are \(describe(seconds: gap)) apart, "
                        + "less than 5 minutes; a stack may not show every entry")
            }
        }
        return (Timeline(entries: order.map { entries[$0] }, policy: policy), warnings)
    }

    /// `90 seconds`, or `0.25 seconds` when the gap is not whole.
    private static func describe(seconds: Double) -> String {
        let whole = seconds.rounded(.towardZero)
        let text = whole == seconds ? String(Int64(whole)) : String(seconds)
        return text + (seconds == 1 ? " second" : " seconds")
    }
}
