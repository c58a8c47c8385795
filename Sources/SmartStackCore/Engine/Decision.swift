/// Why an entry of a decision is where it is: a stable code for logs and analysis.
public enum DecisionReason: String, Sendable, Hashable, CaseIterable, Codable {
    /// Surfaced by the provider's timeline relevance or a relevant context.
    case relevance
    /// Placed by what the user does with the apps (recency, frequency, time, sequence, context, and what the user
    /// opened after looking at the stack).
    case behaviour
    /// Placed mostly by engagement: the user tapped or swiped to this widget, and that (with what the user opened
    /// after looking at the stack) leads its score. Never for a widget without a tap or swipe to it.
    case engagement
    /// Pinned on top by the shell.
    case pinned
    /// Smart Rotate is off: the user's own order.
    case userOrder
    /// The user swiped to it; it keeps the top for the grace period.
    case manualSwipe
    /// Inserted temporarily by Widget Suggestions.
    case suggestion
    /// A Live Activity of one of the stack's apps.
    case liveActivity
    /// Relevance would have rotated it up, but a stability limit withheld the rotation.
    case rotationLimited
    /// Its timeline says it is not relevant now (score ≤ 0).
    case notRelevant
    /// Its relevance duration ended.
    case expired
}

/// One entry of a stack's order.
public struct DecisionEntry: Sendable, Hashable {
    /// The instance id; for a suggestion `suggestion:<app>/<kind>[?name=value&…]` (`Configuration.queryText`), for a
    /// Live Activity `liveActivity:<app>/<id>`.
    public var instance: String
    public var kind: WidgetKindID?
    /// 0-based position, top first.
    public var position: Int
    /// Behaviour probability (0…1, summing to 1 over the stack's widgets) plus normalised relevance (0…1).
    public var score: Double
    public var suggested: Bool
    public var pinned: Bool
    public var reason: DecisionReason
    /// Each signal's share of the score: behaviour signals as their share of the widget's log-odds against
    /// the stack's average widget, `relevance` as the relevance added.
    public var contributions: SignalShares
    /// For a Live Activity entry: the activity as a shell draws it, with its state at the decision's time.
    public var liveActivity: LiveActivityEntry?

    /// An entry with every field given; `liveActivity` only for a Live Activity entry.
    public init(
        instance: String, kind: WidgetKindID?, position: Int, score: Double, suggested: Bool, pinned: Bool,
        reason: DecisionReason, contributions: SignalShares, liveActivity: LiveActivityEntry? = nil
    ) {
        self.instance = instance
        self.kind = kind
        self.position = position
        self.score = score
        self.suggested = suggested
        self.pinned = pinned
        self.reason = reason
        self.contributions = contributions
        self.liveActivity = liveActivity
    }
}

/// A Live Activity as an entry of a stack's order shows it: what a shell needs to draw it.
public struct LiveActivityEntry: Sendable, Hashable {
    /// The activity: app, id, attributes, content state, start, last update, end and removal dates.
    public var activity: LiveActivity
    /// `active` or `ended` at the decision's time (a removed activity has no entry).
    public var state: LiveActivity.Phase

    public init(activity: LiveActivity, state: LiveActivity.Phase) {
        self.activity = activity
        self.state = state
    }
}

/// The order of a stack at a time.
public struct Decision: Sendable, Hashable {
    public var stack: StackID
    /// Changes when the order, a reason or a score (by `scoreResolution` or more) changes.
    public var revision: Int
    public var time: Timestamp
    public var entries: [DecisionEntry]
    /// The stack was removed: no entries, and the revision is its last (`RemoveStack`'s, pushed to subscribers).
    public var removed = false

    public init(stack: StackID, revision: Int, time: Timestamp, entries: [DecisionEntry], removed: Bool = false) {
        self.stack = stack
        self.revision = revision
        self.time = time
        self.entries = entries
        self.removed = removed
    }

    /// The entries' ids, top first.
    public var order: [String] { entries.map(\.instance) }
    public var top: String? { entries.first?.instance }

    /// The first entry that is a widget or a suggestion (a stack's Live Activities come above its widgets): what the
    /// stability rules call the top.
    public var topWidget: DecisionEntry? { entries.first { $0.reason != .liveActivity } }

    /// Scores closer than this count as the same when deciding whether a decision is new.
    public static let scoreResolution = 0.001

    /// Same order, reasons, scores (to `scoreResolution`) and Live Activities (state, content, dates): what a
    /// reader of the decision would see as unchanged. The revision, the time and the contributions aside.
    public func hasSameContent(as other: Decision?) -> Bool {
        guard let other, other.entries.count == entries.count else { return false }
        for (a, b) in zip(entries, other.entries) {
            guard a.instance == b.instance, a.reason == b.reason, a.pinned == b.pinned, a.suggested == b.suggested,
                abs(a.score - b.score) < Self.scoreResolution, a.liveActivity == b.liveActivity
            else { return false }
        }
        return true
    }
}
