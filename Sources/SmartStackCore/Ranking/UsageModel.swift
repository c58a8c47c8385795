/// What the user did with one widget key (an app's kind with one configuration), as decaying aggregates.
///
/// Nothing here is a list of events: every field is a fixed-size summary, so memory and cost per event
/// stay flat however long the history.
struct KeyUsage: Sendable, Hashable {
    /// Microseconds of the latest matching donation, `nil` before the first.
    var lastUse: Int64?
    /// Decayed donation counts at the time constants of `UsageModel.countTaus`.
    var counts: [DecayedCount] = Array(repeating: DecayedCount(), count: UsageModel.countTaus.count)
    /// Decayed donation counts per local hour of day.
    var hours: [DecayedCount] = Array(repeating: DecayedCount(), count: 24)
    /// Decayed donation counts per local weekday (Monday first).
    var weekdays: [DecayedCount] = Array(repeating: DecayedCount(), count: 7)
    /// How often this key was what the user went to right after looking at a stack.
    var afterView = DecayedCount()
    /// Taps on the widget and manual swipes to and away from it.
    var taps = DecayedCount()
    var swipesTo = DecayedCount()
    var swipesAway = DecayedCount()
    /// Decayed donation counts per context pair (`key=value`, interned) in force at the donation.
    var contexts: [Int32: DecayedCount] = [:]
}

/// The behaviour aggregates shared by every stack: per widget key usage, app-to-widget transitions and
/// the sequence state (last and previous app). Keys and apps are interned to dense integers so the hot
/// paths index arrays instead of hashing strings.
struct UsageModel: Sendable, Hashable {
    static let countTaus: [Double] = [4 * 3_600, 3 * 86_400, 14 * 86_400]
    static let hourTau: Double = 21 * 86_400
    static let weekdayTau: Double = 28 * 86_400
    static let transitionTau: Double = 7 * 86_400
    static let afterViewTau: Double = 7 * 86_400
    static let afterViewTransitionTau: Double = 14 * 86_400
    static let engagementTau: Double = 7 * 86_400
    static let contextTau: Double = 14 * 86_400

    private(set) var keys: [KeyUsage] = []
    /// Latest and previous app to donate, and when.
    private(set) var lastApp: Int32?
    private(set) var previousApp: Int32?
    private(set) var lastTime: Int64?
    private(set) var previousTime: Int64?
    /// Decayed counts of "app A donated, then key K matched the next donation", keyed by `pair(A, K)`.
    private(set) var transitions: [Int64: DecayedCount] = [:]
    /// Decayed counts of donations that followed each app.
    private(set) var transitionTotals: [Int32: DecayedCount] = [:]
    /// Decayed counts of "the last app was A when a stack was looked at, and the user then went to K".
    private(set) var afterViewTransitions: [Int64: DecayedCount] = [:]

    @inline(__always)
    static func pair(_ app: Int32, _ key: Int32) -> Int64 { Int64(app) << 32 | Int64(UInt32(bitPattern: key)) }

    /// Makes room for key index `key`.
    mutating func ensureKey(_ key: Int32) {
        while keys.count <= Int(key) { keys.append(KeyUsage()) }
    }

    /// Records a donation by `app` at `time` that matched `matched` keys, with `contextPairs` in force.
    mutating func recordDonation(app: Int32, matched: [Int32], at time: Timestamp, contextPairs: [Int32]) {
        let now = time.microseconds
        let hour = time.localHour
        let weekday = time.localWeekday
        for key in matched {
            ensureKey(key)
            keys[Int(key)].lastUse = max(keys[Int(key)].lastUse ?? now, now)
            for (index, tau) in Self.countTaus.enumerated() {
                keys[Int(key)].counts[index].add(at: now, tau: tau)
            }
            keys[Int(key)].hours[hour].add(at: now, tau: Self.hourTau)
            keys[Int(key)].weekdays[weekday].add(at: now, tau: Self.weekdayTau)
            for pair in contextPairs {
                keys[Int(key)].contexts[pair, default: DecayedCount()].add(at: now, tau: Self.contextTau)
            }
            if let lastApp {
                transitions[Self.pair(lastApp, key), default: DecayedCount()].add(at: now, tau: Self.transitionTau)
            }
        }
        if let lastApp {
            transitionTotals[lastApp, default: DecayedCount()].add(at: now, tau: Self.transitionTau)
        }
        previousApp = lastApp
        previousTime = lastTime
        lastApp = app
        lastTime = now
    }

    /// Records that after a look at a stack (while `lastAppAtView` was the last app) the user went to `key`.
    mutating func recordAfterView(key: Int32, lastAppAtView: Int32?, at time: Timestamp) {
        ensureKey(key)
        let now = time.microseconds
        keys[Int(key)].afterView.add(at: now, tau: Self.afterViewTau)
        if let lastAppAtView {
            afterViewTransitions[Self.pair(lastAppAtView, key), default: DecayedCount()]
                .add(at: now, tau: Self.afterViewTransitionTau)
        }
    }

    /// Records engagement with a widget key.
    mutating func recordEngagement(key: Int32, kind: EngagementKind, at time: Timestamp) {
        ensureKey(key)
        let now = time.microseconds
        switch kind {
        case .tap: keys[Int(key)].taps.add(at: now, tau: Self.engagementTau)
        case .swipeTo: keys[Int(key)].swipesTo.add(at: now, tau: Self.engagementTau)
        case .swipeAway: keys[Int(key)].swipesAway.add(at: now, tau: Self.engagementTau)
        case .impression: break
        }
    }

    func transition(from app: Int32?, to key: Int32, at now: Int64) -> Double {
        guard let app else { return 0 }
        return transitions[Self.pair(app, key)]?.value(at: now, tau: Self.transitionTau) ?? 0
    }

    func transitionTotal(from app: Int32?, at now: Int64) -> Double {
        guard let app else { return 0 }
        return transitionTotals[app]?.value(at: now, tau: Self.transitionTau) ?? 0
    }

    func afterViewTransition(from app: Int32?, to key: Int32, at now: Int64) -> Double {
        guard let app else { return 0 }
        return afterViewTransitions[Self.pair(app, key)]?.value(at: now, tau: Self.afterViewTransitionTau) ?? 0
    }
}
