/// A Live Activity: an app's ongoing event shown above a stack's widgets while it lasts.
///
/// Its phases follow from its dates alone (DESIGN "Live Activity"): active until ended explicitly or for at most
/// ``maxActive`` seconds after it started, then visible as ended for at most ``maxEndedVisible`` seconds (or less
/// when the app dismisses it sooner), then removed. Computing phases from dates keeps queries at any time exact
/// without a timer having to fire.
public struct LiveActivity: Hashable, Sendable {
    /// Where an activity is in its life at a time.
    public enum Phase: String, Hashable, Sendable {
        /// Running: shown above the stack's widgets.
        case active
        /// Ended, still visible with its final content.
        case ended
        /// Gone; no longer shown or counted.
        case removed
    }

    /// The longest an activity stays active, in seconds (8 hours); the service ends it then.
    public static let maxActive = 8 * 3_600.0
    /// The longest an ended activity stays visible, in seconds (4 hours).
    public static let maxEndedVisible = 4 * 3_600.0

    /// The app's id for the activity, unique among its app's activities that are not removed.
    public var id: String
    /// The app that started it.
    public var app: AppID
    /// Fixed attributes given at the start.
    public var attributes: [String: String]
    /// The current content, replaced by each update.
    public var contentState: [String: String]
    /// When it started.
    public var started: Timestamp
    /// When it was last started, updated or ended.
    public var updated: Timestamp
    /// When the app ended it, if it did before the automatic end.
    public var endedExplicitly: Timestamp?
    /// When the app asked for the ended activity to disappear, if sooner than ``maxEndedVisible``.
    public var dismissal: Timestamp?

    /// An activity with every field given; ``LiveActivityRegistry`` makes validated ones.
    public init(
        id: String, app: AppID, attributes: [String: String], contentState: [String: String], started: Timestamp,
        updated: Timestamp, endedExplicitly: Timestamp? = nil, dismissal: Timestamp? = nil
    ) {
        self.id = id
        self.app = app
        self.attributes = attributes
        self.contentState = contentState
        self.started = started
        self.updated = updated
        self.endedExplicitly = endedExplicitly
        self.dismissal = dismissal
    }

    /// When it ends: the explicit end, or ``maxActive`` after the start, whichever is first.
    public var endDate: Timestamp {
        let automatic = started.adding(seconds: Self.maxActive)
        return endedExplicitly.map { min($0, automatic) } ?? automatic
    }

    /// When it is removed: ``maxEndedVisible`` after the end, or the app's dismissal if that is sooner.
    public var removalDate: Timestamp {
        let latest = endDate.adding(seconds: Self.maxEndedVisible)
        return dismissal.map { min($0, latest) } ?? latest
    }

    /// The phase at `t`: active before ``endDate``, ended before ``removalDate``, then removed.
    public func phase(at t: Timestamp) -> Phase {
        if t < endDate { return .active }
        return t < removalDate ? .ended : .removed
    }
}

/// Every app's Live Activities, with the DESIGN's lifetimes and limits.
///
/// Removed activities stop counting at once, whether or not ``prune(at:)`` has dropped them yet.
public struct LiveActivityRegistry: Hashable, Sendable {
    /// The default for ``maxPerApp``.
    public static let defaultMaxPerApp = 16
    /// The longest activity id, in UTF-8 bytes.
    public static let maxIDBytes = 255
    /// The most keys in attributes or content state.
    public static let maxKeys = 64
    /// The longest key, in UTF-8 bytes.
    public static let maxKeyBytes = 255
    /// The longest value, in UTF-8 bytes.
    public static let maxValueBytes = 4_096

    /// Activities per app that are active or ended but visible.
    public let maxPerApp: Int
    /// Activities by app, then by id.
    var byApp: [AppID: [String: LiveActivity]] = [:]

    /// An empty registry allowing `maxPerApp` activities per app.
    public init(maxPerApp: Int = defaultMaxPerApp) {
        self.maxPerApp = maxPerApp
    }

    /// Starts activity `id` of `app` at `t`.
    ///
    /// An id may be reused once its earlier activity is removed; until then the start is a conflict.
    /// `admitting`: whether `maxPerApp` applies (a new call), or the start is one a log already holds.
    public mutating func start(
        app: AppID, id: String, attributes: [String: String], contentState: [String: String], at t: Timestamp,
        admitting: Bool = true
    ) throws(CoreError) {
        try Self.validate(id: id)
        try Self.validate(attributes, parameter: "attributes")
        try Self.validate(contentState, parameter: "contentState")
        if let existing = byApp[app]?[id], existing.phase(at: t) != .removed {
            throw .conflict(
                kind: "liveActivity", id: id, reason: "an activity with this id is \(existing.phase(at: t))")
        }
        let visible = byApp[app]?.values.count { $0.phase(at: t) != .removed } ?? 0
        guard !admitting || visible < maxPerApp else {
            throw .limitExceeded(limit: "maxLiveActivitiesPerApp", maximum: maxPerApp)
        }
        byApp[app, default: [:]][id] = LiveActivity(
            id: id, app: app, attributes: attributes, contentState: contentState, started: t, updated: t)
    }

    /// Replaces the content of an active activity.
    public mutating func update(app: AppID, id: String, contentState: [String: String], at t: Timestamp)
        throws(CoreError)
    {
        try Self.validate(id: id)
        try Self.validate(contentState, parameter: "contentState")
        var activity = try existing(app: app, id: id, at: t)
        guard activity.phase(at: t) == .active else {
            throw .conflict(kind: "liveActivity", id: id, reason: "the activity has ended")
        }
        // An update dated before the activity's last change (queued by the app, arriving late) is history: it does
        // not roll the content back, nor `updated` (which otherwise went back, even before `started`).
        guard t >= activity.updated else { return }
        activity.contentState = contentState
        activity.updated = t
        byApp[app, default: [:]][id] = activity
    }

    /// Ends an activity at `t`, optionally with final content, visible for `dismissAfter` seconds (at most and
    /// by default ``LiveActivity/maxEndedVisible``).
    ///
    /// Ending an activity that has already ended (by the app or after 8 hours) keeps its end date and only sets
    /// the final content and brings the dismissal sooner, so an app can take an ended activity away sooner; it never
    /// puts the removal later (a retried end without `dismissAfter` kept an activity the app had dismissed for 4
    /// more hours). An end dated before the activity's last change is taken at that change: it did not end before
    /// it was updated (an end dated year 1 removed an activity started a moment ago).
    public mutating func end(
        app: AppID, id: String, contentState: [String: String]? = nil, dismissAfter: Double? = nil, at time: Timestamp
    ) throws(CoreError) {
        try Self.validate(id: id)
        if let contentState { try Self.validate(contentState, parameter: "contentState") }
        if let dismissAfter, !(dismissAfter >= 0 && dismissAfter <= LiveActivity.maxEndedVisible) {
            throw .invalidParameter(
                parameter: "dismissAfter",
                reason: "must be between 0 and \(Int(LiveActivity.maxEndedVisible)) seconds")
        }
        var activity = try existing(app: app, id: id, at: time)
        let t = max(time, activity.updated)
        if activity.phase(at: t) == .active {
            activity.endedExplicitly = t
            activity.dismissal = dismissAfter.map { t.adding(seconds: $0) }
        } else if let dismissAfter {
            activity.dismissal = min(activity.removalDate, t.adding(seconds: dismissAfter))
        }
        if let contentState { activity.contentState = contentState }
        activity.updated = t
        byApp[app, default: [:]][id] = activity
    }

    /// The activity `id` of `app` unless it is removed at `t`.
    public func activity(app: AppID, id: String, at t: Timestamp) -> LiveActivity? {
        guard let activity = byApp[app]?[id], activity.phase(at: t) != .removed else { return nil }
        return activity
    }

    /// Every visible activity at `t`: active ones by start date, then ended ones by start date.
    public func activities(at t: Timestamp) -> [LiveActivity] {
        Self.ordered(byApp.values.flatMap(\.values), at: t)
    }

    /// The visible activities of `apps` at `t`, ordered as `activities(at:)`: what a stack of those apps shows. It
    /// reads only their activities, so a stack's decision costs nothing for the activities of apps it does not have
    /// (it sorted every app's, which let one uid's thousands of activities slow every other client's calls).
    public func activities(of apps: some Sequence<AppID>, at t: Timestamp) -> [LiveActivity] {
        var found: [LiveActivity] = []
        for app in apps { if let activities = byApp[app] { found += activities.values } }
        return Self.ordered(found, at: t)
    }

    /// How many activities are visible at `t`: of `app`, or of every app.
    public func visibleCount(of app: AppID? = nil, at t: Timestamp) -> Int {
        if let app { return byApp[app]?.values.count { $0.phase(at: t) != .removed } ?? 0 }
        return byApp.values.reduce(0) { count, activities in
            count + activities.values.count { $0.phase(at: t) != .removed }
        }
    }

    /// The apps with activities stored (visible, or removed and not yet pruned).
    public var apps: Dictionary<AppID, [String: LiveActivity]>.Keys { byApp.keys }

    /// Whether no activity is stored.
    public var isEmpty: Bool { byApp.isEmpty }

    /// `activities` visible at `t`, active ones by start date, then ended ones by start date.
    private static func ordered(_ activities: [LiveActivity], at t: Timestamp) -> [LiveActivity] {
        guard !activities.isEmpty else { return [] }
        var visible: [(activity: LiveActivity, active: Bool)] = []
        visible.reserveCapacity(activities.count)
        for activity in activities {
            let phase = activity.phase(at: t)
            if phase != .removed { visible.append((activity, phase == .active)) }
        }
        visible.sort { lhs, rhs in
            if lhs.active != rhs.active { return lhs.active }
            return startOrder(lhs.activity, rhs.activity)
        }
        return visible.map(\.activity)
    }

    /// The active activities of `app` at `t`, by start date.
    public func active(app: AppID, at t: Timestamp) -> [LiveActivity] {
        let values = byApp[app].map { Array($0.values) } ?? []
        return values.filter { $0.phase(at: t) == .active }.sorted(by: Self.startOrder)
    }

    /// Drops `app`'s activities removed at `t`.
    public mutating func prune(app: AppID, at t: Timestamp) {
        guard let activities = byApp[app] else { return }
        let kept = activities.filter { $0.value.phase(at: t) != .removed }
        byApp[app] = kept.isEmpty ? nil : kept
    }

    /// Drops the activities removed at `t`, so storage holds only visible ones.
    public mutating func prune(at t: Timestamp) {
        for (app, activities) in byApp {
            let kept = activities.filter { $0.value.phase(at: t) != .removed }
            byApp[app] = kept.isEmpty ? nil : kept
        }
    }

    /// The first time after `t` at which an activity ends automatically (or as ended explicitly) or is removed.
    public func nextChange(after t: Timestamp) -> Timestamp? {
        var next: Timestamp?
        for activity in byApp.values.flatMap(\.values) {
            for date in [activity.endDate, activity.removalDate] where date > t {
                if next.map({ date < $0 }) ?? true { next = date }
            }
        }
        return next
    }

    /// The stored activity, or `notFound` when there is none or it is removed at `t`.
    private func existing(app: AppID, id: String, at t: Timestamp) throws(CoreError) -> LiveActivity {
        guard let activity = activity(app: app, id: id, at: t) else {
            throw .notFound(kind: "liveActivity", id: id)
        }
        return activity
    }

    /// Start date, then app and id, so equal start dates still order deterministically.
    private static func startOrder(_ lhs: LiveActivity, _ rhs: LiveActivity) -> Bool {
        if lhs.started != rhs.started { return lhs.started < rhs.started }
        if lhs.app != rhs.app { return lhs.app < rhs.app }
        return lhs.id < rhs.id
    }

    private static func validate(id: String) throws(CoreError) {
        let bytes = id.utf8.count
        guard bytes > 0 else { throw .invalidParameter(parameter: "id", reason: "must not be empty") }
        guard bytes <= maxIDBytes else {
            throw .invalidParameter(parameter: "id", reason: "is \(bytes) bytes; at most \(maxIDBytes) allowed")
        }
    }

    private static func validate(_ values: [String: String], parameter: String) throws(CoreError) {
        guard values.count <= maxKeys else {
            throw .invalidParameter(
                parameter: parameter, reason: "has \(values.count) keys; at most \(maxKeys) allowed")
        }
        // Sorted so that, with several bad keys, the same one is reported every time.
        for key in values.keys.sorted() {
            let keyBytes = key.utf8.count
            guard keyBytes > 0, keyBytes <= maxKeyBytes else {
                throw .invalidParameter(parameter: parameter, reason: "keys must be 1 to \(maxKeyBytes) bytes")
            }
            let valueBytes = values[key]?.utf8.count ?? 0
            guard valueBytes <= maxValueBytes else {
                throw .invalidParameter(
                    parameter: "\(parameter).\(key)",
                    reason: "is \(valueBytes) bytes; at most \(maxValueBytes) allowed")
            }
        }
    }
}
