#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The decayed counters kept per widget key (an app's kind with one configuration), as offsets into one row of
/// `UsageModel.counters`.
///
/// Every field is a fixed-size summary, so memory and cost per event stay flat however long the history; the
/// rows of all keys sit in one flat array, so reading them allocates nothing and touches no reference counts.
enum KeyCounter {
    /// Donation counts at the time constants of `UsageModel.countScales` (3 slots).
    static let counts = 0
    /// Donation counts per local hour of day (24 slots).
    static let hours = 3
    /// Donation counts per local weekday, Monday first (7 slots).
    static let weekdays = 27
    /// How often this key was what the user went to right after looking at a stack.
    static let afterView = 34
    /// The same over a month: the back-off base of what follows a look in context.
    static let afterLookLong = 35
    /// Taps on the widget and manual swipes to and away from it.
    static let taps = 36
    static let swipesTo = 37
    static let swipesAway = 38
    /// Matching donations ever (not decayed): the fallback `mfu` ranker.
    static let total = 39
    /// Matching donations ever per local hour of day (24 slots, not decayed): the fallback `hour-mfu` ranker.
    static let totalHours = 40
    /// Σ exp((day − base day) / 32) over matching donations, by local calendar day: the fallback `frecency`
    /// ranker (rebased with `UsageModel.frecencyBaseDay`, not by the clock).
    static let frecency = 64
    /// Microseconds (as a `Double`, exact below 2⁵³) when the key's app last left the front: the next donation
    /// by another app after the key's latest matching donation; 0 before that. Never rescaled.
    static let leftFront = 65
    /// Slots per key.
    static let width = 66

    /// The time constant of every slot; `nil` for the slots the clock never rescales (plain and day counts).
    static let scales: [DecayScale?] = (0..<width).map { slot in
        switch slot {
        case counts..<hours: UsageModel.countScales[slot - counts]
        case hours..<weekdays: UsageModel.hourScale
        case weekdays..<afterView: UsageModel.weekdayScale
        case afterView: UsageModel.afterViewScale
        case afterLookLong: UsageModel.lookContextScale
        case taps...swipesAway: UsageModel.engagementScale
        default: nil
        }
    }
}

/// The behaviour aggregates shared by every stack: per widget key usage, app-to-widget transitions, what follows
/// looks, and the sequence state (last and previous app).
///
/// Keys and apps are interned to dense integers, so the hot paths index arrays or probe `CountTable`s instead of
/// hashing strings. Every decayed count is a sum against the shared `DecayClock`.
///
/// Bounded state: per-key rows grow with keys; the pair tables (transitions, look outcomes, contexts) could
/// grow with the history, so whenever the clock is rescaled (every 64 × 4 h ≈ 10.7 days of event time) their
/// counts that decayed below `negligibleCount` are dropped. What stays is what the last few time constants
/// saw, however long the history.
struct UsageModel: Sendable {
    static let countScales: [DecayScale] = [.fourHours, .threeDays, .fourteenDays]
    static let hourScale = DecayScale.twentyOneDays
    static let weekdayScale = DecayScale.twentyEightDays
    static let transitionScale = DecayScale.sevenDays
    static let afterViewScale = DecayScale.sevenDays
    static let afterViewTransitionScale = DecayScale.fourteenDays
    static let engagementScale = DecayScale.sevenDays
    static let contextScale = DecayScale.fourteenDays
    static let lookContextScale = DecayScale.thirtyDays
    /// A pair-table count below this (one event more than 11.5 time constants old) is dropped at a rescale.
    /// The features that read these counts smooth them with priors of 0.1–2 per widget, or (transitions) with
    /// half the widget's frequency share and a floor of 10⁻³ inside the logarithm, so dropping such a count
    /// moves a feature by at most about 0.02 — and that only for a widget barely used in months.
    static let negligibleCount = 1e-5
    /// How far before the latest donation one may be dated and still take the front, in microseconds: donations
    /// of one moment reach the service in any order (one provider dates an open by when the app started, another
    /// by when it sent the call), so a few seconds apart they are the same moment, not history.
    static let outOfOrderGrace: Int64 = 10_000_000

    var clock = DecayClock()
    /// The prior new stacks' rankers start from (configuration, not in snapshots: each stack keeps its own).
    var prior = RankingPrior.shipped
    /// `KeyCounter.width` sums per key, key after key.
    var counters: [Double] = []
    /// Microseconds of each key's latest matching donation, `Int64.min` before the first.
    var lastUses: [Int64] = []
    /// Latest and previous app to donate, and when.
    var lastApp: Int32?
    var previousApp: Int32?
    var lastTime: Int64?
    var previousTime: Int64?
    /// The app before the previous one.
    var thirdApp: Int32?
    /// The keys the donations of the app in front matched: they leave the front when another app donates.
    var frontKeys: [Int32] = []
    /// How often the user went to a widget of each recency class (`RecencyClass`) after a look in each idle-gap
    /// bucket (`GapBucket`) with the app in front reached in each way (`ReachBucket`), decayed:
    /// `recencyByGap[(gap * ReachBucket.count + reach) * RecencyClass.count + class]`. Per user, learned online.
    var recencyByGap = [Double](repeating: 0, count: GapBucket.count * ReachBucket.count * RecencyClass.count)
    /// When a stack was last looked at (microseconds), `nil` before the first look.
    var lastLookTime: Int64?
    /// How the app in front was reached (`ReachBucket`).
    var reach: Int8 = ReachBucket.direct
    /// What the user went to after a look, per look context (a back-off chain of the last apps and the idle
    /// gap) and widget key.
    var lookOutcomes = CountTable<LookOutcomeKey>()
    /// Which look contexts have entries in `lookOutcomes`: most a query meets have none.
    var lookContextFilter = LookContextFilter()
    /// "App A donated, then key K matched the next donation", keyed by `pair(A, K)`.
    var transitions = CountTable<UInt64>()
    /// Donations that followed each app, by app.
    var transitionTotals: [Double] = []
    /// "The last app was A when a stack was looked at, and the user then went to K", keyed by `pair(A, K)`.
    var afterViewTransitions = CountTable<UInt64>()
    /// Donations of key K while context pair P (`key=value`, interned) was in force, keyed by `pair(P, K)`.
    var contextCounts = CountTable<UInt64>()
    /// The local day the `KeyCounter.frecency` sums are relative to; set by the first matching donation.
    var frecencyBaseDay: Int64?
    /// Days over which a donation's weight in the frecency sums falls by a factor e.
    static let frecencyDays = 32.0
    /// How far past the base day a donation may be before the frecency sums are rebased (e^(4096/32) ≈ 4e55).
    static let frecencyRebaseDays: Int64 = 4_096

    @inline(__always)
    static func pair(_ first: Int32, _ key: Int32) -> UInt64 {
        UInt64(UInt32(bitPattern: first)) << 32 | UInt64(UInt32(bitPattern: key))
    }

    /// Keys with a row.
    var keyCount: Int { lastUses.count }

    /// Makes room for key index `key`.
    mutating func ensureKey(_ key: Int32) {
        guard Int(key) >= keyCount else { return }
        let rows = Int(key) + 1
        counters.append(contentsOf: repeatElement(0, count: (rows - keyCount) * KeyCounter.width))
        lastUses.append(contentsOf: repeatElement(.min, count: rows - keyCount))
    }

    /// Microseconds of the key's latest matching donation, `nil` before the first.
    func lastUse(of key: Int32) -> Int64? {
        Int(key) < keyCount && lastUses[Int(key)] != .min ? lastUses[Int(key)] : nil
    }

    /// Records a donation by `app` at `time` that matched `matched` keys, with `contextPairs` in force.
    ///
    /// A donation dated more than `outOfOrderGrace` before the latest one recorded (a client's backdated donation,
    /// an old log replayed into a live service) is history, not the present: it counts for its keys (frequency,
    /// hours, days, contexts, last use) but does not become the app in front, a transition, or the start of the
    /// idle gap. Taken as the latest, it made its app the one in front for every stack's features and moved the
    /// idle gap's start back in time. One dated less before it came at about the same moment and reached the service
    /// out of order: it is taken as the latest, at the latest one's time.
    mutating func recordDonation(app: Int32, matched: [Int32], at time: Timestamp, contextPairs: [Int32]) {
        let donated = time.microseconds
        prepareToRecord(at: donated)
        let latest = lastTime ?? donated
        let (behind, overflow) = latest.subtractingReportingOverflow(donated)
        guard donated >= latest || (!overflow && behind <= Self.outOfOrderGrace) else {
            recordCounts(matched: matched, at: time, contextPairs: contextPairs, transition: nil)
            return
        }
        // The sequence (the front, the reach, the idle gap) never runs backwards.
        let now = max(donated, latest)
        let reached = ReachBucket.of(now: now, previous: lastTime, look: lastLookTime)
        if app != lastApp || reached != ReachBucket.direct { reach = reached }
        if app != lastApp {
            for key in frontKeys where !matched.contains(key) && Int(key) < keyCount {
                counters[Int(key) * KeyCounter.width + KeyCounter.leftFront] = Double(now)
            }
            // Refilled in place: the list keeps its own buffer, so a donation allocates nothing here.
            frontKeys.removeAll(keepingCapacity: true)
            frontKeys.append(contentsOf: matched)
        } else {
            for key in matched where !frontKeys.contains(key) { frontKeys.append(key) }
        }
        let transitionWeight = clock.weight(at: donated, tau: Self.transitionScale.tau)
        recordCounts(
            matched: matched, at: time, contextPairs: contextPairs,
            transition: lastApp.map { (from: $0, weight: transitionWeight) })
        if let lastApp {
            if Int(lastApp) >= transitionTotals.count {
                transitionTotals.append(contentsOf: repeatElement(0, count: Int(lastApp) + 1 - transitionTotals.count))
            }
            transitionTotals[Int(lastApp)] += transitionWeight
        }
        thirdApp = previousApp
        previousApp = lastApp
        previousTime = lastTime
        lastApp = app
        lastTime = now
    }

    /// A donation's counts for the keys it matched; with a `transition`, the transition to them from that app.
    private mutating func recordCounts(
        matched: [Int32], at time: Timestamp, contextPairs: [Int32], transition: (from: Int32, weight: Double)?
    ) {
        let now = time.microseconds
        if !matched.isEmpty {
            let hour = time.localHour
            let weekday = time.localWeekday
            var countWeights = SIMD4<Double>()
            for (index, scale) in Self.countScales.enumerated() {
                countWeights[index] = clock.weight(at: now, tau: scale.tau)
            }
            let hourWeight = clock.weight(at: now, tau: Self.hourScale.tau)
            let weekdayWeight = clock.weight(at: now, tau: Self.weekdayScale.tau)
            let contextWeight = contextPairs.isEmpty ? 0 : clock.weight(at: now, tau: Self.contextScale.tau)
            let frecencyWeight = frecencyWeight(day: time.localDay)
            for key in matched {
                ensureKey(key)
                let row = Int(key) * KeyCounter.width
                lastUses[Int(key)] = max(lastUses[Int(key)], now)
                for index in Self.countScales.indices {
                    counters[row + KeyCounter.counts + index] += countWeights[index]
                }
                counters[row + KeyCounter.hours + hour] += hourWeight
                counters[row + KeyCounter.weekdays + weekday] += weekdayWeight
                counters[row + KeyCounter.total] += 1
                counters[row + KeyCounter.totalHours + hour] += 1
                counters[row + KeyCounter.frecency] += frecencyWeight
                for pair in contextPairs { contextCounts.add(contextWeight, to: Self.pair(pair, key)) }
                if let transition { transitions.add(transition.weight, to: Self.pair(transition.from, key)) }
            }
        }
    }

    /// What a donation on local day `day` adds to the frecency sums, rebasing them first when `day` is too far
    /// past the base day (as the `frecency` baseline of docs/usage-log.md does).
    private mutating func frecencyWeight(day: Int64) -> Double {
        let base: Int64
        if let current = frecencyBaseDay, day - current > Self.frecencyRebaseDays {
            let scale = exp(-Double(day - current) / Self.frecencyDays)
            for row in 0..<keyCount { counters[row * KeyCounter.width + KeyCounter.frecency] *= scale }
            base = day
        } else {
            base = frecencyBaseDay ?? day
        }
        frecencyBaseDay = base
        return exp(Double(day - base) / Self.frecencyDays)
    }

    /// Records that after a look at a stack (at `lookTime`, in `contexts`, while `lastAppAtView` was the last
    /// app, the target having recency class and gap bucket `recency`, if known) the user went to `key` at `time`.
    mutating func recordAfterView(
        key: Int32, lastAppAtView: Int32?, contexts: [LookContext], recency: (recency: Int, gap: Int)?,
        lookTime: Timestamp, at time: Timestamp
    ) {
        ensureKey(key)
        let now = time.microseconds
        prepareToRecord(at: now)
        let row = Int(key) * KeyCounter.width
        counters[row + KeyCounter.afterView] += clock.weight(at: now, tau: Self.afterViewScale.tau)
        let lookWeight = clock.weight(at: lookTime.microseconds, tau: Self.lookContextScale.tau)
        counters[row + KeyCounter.afterLookLong] += lookWeight
        if let recency, recency.recency >= 0, recency.recency < RecencyClass.count, recency.gap >= 0,
            recency.gap < GapBucket.count
        {
            let cell = (recency.gap * ReachBucket.count + Int(reach)) * RecencyClass.count + recency.recency
            recencyByGap[cell] += lookWeight
        }
        for context in contexts {
            guard lookOutcomes.add(lookWeight, to: LookOutcomeKey(context: context, key: key)) else { continue }
            // A new entry: count its context, or recount all if the table grew.
            if lookContextFilter.capacity == lookOutcomes.capacity {
                lookContextFilter.insert(context)
            } else {
                rebuildLookContextFilter()
            }
        }
        if let lastAppAtView {
            afterViewTransitions.add(
                clock.weight(at: now, tau: Self.afterViewTransitionScale.tau), to: Self.pair(lastAppAtView, key))
        }
    }

    /// Notes a look at a stack at `time` (microseconds): how the next app is reached depends on it.
    mutating func noteLook(at time: Int64) {
        lastLookTime = max(lastLookTime ?? time, time)
    }

    /// Records engagement with a widget key.
    mutating func recordEngagement(key: Int32, kind: EngagementKind, at time: Timestamp) {
        let slot: Int
        switch kind {
        case .tap: slot = KeyCounter.taps
        case .swipeTo: slot = KeyCounter.swipesTo
        case .swipeAway: slot = KeyCounter.swipesAway
        case .impression: return
        }
        ensureKey(key)
        let now = time.microseconds
        prepareToRecord(at: now)
        counters[Int(key) * KeyCounter.width + slot] += clock.weight(at: now, tau: Self.engagementScale.tau)
    }

    private mutating func rebuildLookContextFilter() {
        lookContextFilter.rebuild(
            capacity: lookOutcomes.capacity, contexts: lookOutcomes.entries.lazy.map(\.key.context))
    }

    /// Moves the clock to `time`, first rescaling every sum when the reference has grown too old.
    private mutating func prepareToRecord(at time: Int64) {
        let rescale = clock.needsRescale(toRecordAt: time)
        clock.record(at: time)
        guard rescale else { return }
        let factors = clock.rescale()
        let slotFactors = KeyCounter.scales.map { $0.map { factors[$0] } ?? 1 }
        for row in 0..<keyCount {
            for slot in 0..<KeyCounter.width { counters[row * KeyCounter.width + slot] *= slotFactors[slot] }
        }
        let transitionFactor = factors[Self.transitionScale]
        for app in transitionTotals.indices { transitionTotals[app] *= transitionFactor }
        transitions.scale(by: transitionFactor, droppingBelow: Self.negligibleCount)
        afterViewTransitions.scale(by: factors[Self.afterViewTransitionScale], droppingBelow: Self.negligibleCount)
        contextCounts.scale(by: factors[Self.contextScale], droppingBelow: Self.negligibleCount)
        for slot in recencyByGap.indices { recencyByGap[slot] *= factors[Self.lookContextScale] }
        lookOutcomes.scale(by: factors[Self.lookContextScale], droppingBelow: Self.negligibleCount) { dropped in
            lookContextFilter.remove(dropped.context)
        }
        if lookContextFilter.capacity != lookOutcomes.capacity { rebuildLookContextFilter() }
    }
}
