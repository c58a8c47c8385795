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
    /// The same over a month: the back-off base of what follows a look in context.
    var afterLookLong = DecayedCount()
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
    static let lookContextTau: Double = 30 * 86_400

    var keys: [KeyUsage] = []
    /// Latest and previous app to donate, and when.
    var lastApp: Int32?
    var previousApp: Int32?
    var lastTime: Int64?
    var previousTime: Int64?
    /// The app before the previous one.
    var thirdApp: Int32?
    /// Decayed counts of what the user went to after a look, per look context (a back-off chain of the last
    /// apps and the idle gap), keyed by context and widget key.
    var lookOutcomes: [LookOutcomeKey: DecayedCount] = [:]
    /// Decayed counts of "app A donated, then key K matched the next donation", keyed by `pair(A, K)`.
    var transitions: [Int64: DecayedCount] = [:]
    /// Decayed counts of donations that followed each app.
    var transitionTotals: [Int32: DecayedCount] = [:]
    /// Decayed counts of "the last app was A when a stack was looked at, and the user then went to K".
    var afterViewTransitions: [Int64: DecayedCount] = [:]

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
        thirdApp = previousApp
        previousApp = lastApp
        previousTime = lastTime
        lastApp = app
        lastTime = now
    }

    /// Records that after a look at a stack (at `lookTime`, in `contexts`, while `lastAppAtView` was the last
    /// app) the user went to `key` at `time`.
    mutating func recordAfterView(
        key: Int32, lastAppAtView: Int32?, contexts: [LookContext], lookTime: Timestamp, at time: Timestamp
    ) {
        ensureKey(key)
        let now = time.microseconds
        keys[Int(key)].afterView.add(at: now, tau: Self.afterViewTau)
        keys[Int(key)].afterLookLong.add(at: lookTime.microseconds, tau: Self.lookContextTau)
        for context in contexts {
            lookOutcomes[LookOutcomeKey(context: context, key: key), default: DecayedCount()]
                .add(at: lookTime.microseconds, tau: Self.lookContextTau)
        }
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

/// Where a look happens, at four levels of detail: the app in front; and the app before it; and the idle
/// gap; and the app before that. What follows a look is learned per level and backed off from the most
/// general to the most specific, so a rare context borrows from its general level.
struct LookContext: Hashable, Sendable {
    var level: Int8
    var last: Int32
    var previous: Int32
    var third: Int32
    var gap: Int8
}

struct LookOutcomeKey: Hashable, Sendable {
    var context: LookContext
    var key: Int32
}

extension UsageModel {
    /// The back-off chain of look contexts at `now`, most general first.
    func lookContexts(at now: Int64) -> [LookContext] {
        let gapSeconds = lastTime.map { Double(now - $0) / 1_000_000 }
        let gap: Int8 =
            switch gapSeconds {
            case .some(let g) where g < 10: 0
            case .some(let g) where g < 60: 1
            case .some(let g) where g < 300: 2
            case .some(let g) where g < 1_800: 3
            case .some(let g) where g < 14_400: 4
            default: 5
            }
        let last = lastApp ?? -1
        let previous = previousApp ?? -1
        let third = thirdApp ?? -1
        return [
            LookContext(level: 0, last: last, previous: -1, third: -1, gap: -1),
            LookContext(level: 1, last: last, previous: previous, third: -1, gap: -1),
            LookContext(level: 2, last: last, previous: previous, third: -1, gap: gap),
            LookContext(level: 3, last: last, previous: previous, third: third, gap: gap),
        ]
    }
}
