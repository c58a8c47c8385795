/// The relevance of one widget instance at a time, as its timelines define it.
public struct RelevanceState: Hashable, Sendable {
    /// Where the widget's relevance stands.
    public enum Status: String, Hashable, Sendable {
        /// No relevance has been in force in the current timeline.
        case none
        /// A positive score is in force.
        case relevant
        /// The relevance in force has a score `<= 0`: the widget is not relevant and never rotates up for it.
        case notRelevant
        /// The relevance in force had a duration that has run out; it now counts as a score of 0.
        case expired
    }

    /// Where the relevance stands.
    public var status: Status
    /// The raw score in force; 0 unless `status` is `relevant`.
    public var score: Double
    /// `score` divided by the largest positive score of the widget's current and past entries, in `0...1`.
    public var normalized: Double
    /// The date of the entry whose relevance is in force.
    public var since: Timestamp?
    /// When the relevance in force runs out (its entry had a duration > 0).
    public var expires: Timestamp?
    /// The date of the current entry: the latest one at or before the time asked about.
    public var currentEntryDate: Timestamp?

    /// No relevance: the state of a widget without a timeline.
    static let nothing = RelevanceState(
        status: .none, score: 0, normalized: 0, since: nil, expires: nil, currentEntryDate: nil)

    /// A state with every field given.
    public init(
        status: Status, score: Double, normalized: Double, since: Timestamp?, expires: Timestamp?,
        currentEntryDate: Timestamp?
    ) {
        self.status = status
        self.score = score
        self.normalized = normalized
        self.since = since
        self.expires = expires
        self.currentEntryDate = currentEntryDate
    }
}

/// Relevance of one widget instance over time: the current timeline plus what earlier timelines left behind.
///
/// Rules (DESIGN "Timeline"): an entry becomes current at its date; the relevance in force comes from the latest
/// current entry with a relevance (`nil` keeps the previous one); a score `<= 0` is not relevant; a duration
/// `> 0` ends at `date + duration` (then the widget counts as expired), a duration of 0 lasts until the next
/// entry with a relevance. Scores are normalised by the largest positive score among the widget's entries that
/// have become current, in this timeline or in replaced ones, so the provider's scale does not matter.
///
/// Earlier timelines are kept only as one number, ``historicalMax``, and the current timeline carries prefix
/// tables, so ``state(at:)`` and ``nextChange(after:)`` cost O(log n) in the number of entries.
public struct RelevanceTracker: Hashable, Sendable {
    /// The current timeline, `nil` before the first submission.
    public private(set) var timeline: Timeline?
    /// The largest positive score of entries of replaced timelines that had become current before replacement;
    /// 0 when there was none.
    public private(set) var historicalMax: Double
    /// For entry `i`, the index of the latest entry `<= i` with a relevance, or -1.
    private var inForceIndex: [Int] = []
    /// For entry `i`, the largest positive score among entries `0...i`, or 0.
    private var prefixMax: [Double] = []

    /// A tracker with no timeline; `historicalMax` restores history from a snapshot (ignored unless finite and
    /// positive).
    public init(historicalMax: Double = 0) {
        self.timeline = nil
        self.historicalMax = historicalMax.isFinite && historicalMax > 0 ? historicalMax : 0
    }

    /// A tracker restored with a timeline and the history of the timelines before it.
    public init(timeline: Timeline, historicalMax: Double = 0) {
        self.init(historicalMax: historicalMax)
        install(timeline)
    }

    /// Replaces the current timeline with `timeline`, submitted at `now`.
    ///
    /// The old timeline's entries dated at or before `now` had become current, so their scores join the history
    /// that later scores are normalised against; its future entries never happened and are forgotten.
    public mutating func replace(with timeline: Timeline, at now: Timestamp) {
        if let current = currentIndex(at: now) {
            historicalMax = max(historicalMax, prefixMax[current])
        }
        install(timeline)
    }

    /// The relevance in force at `t` (meant for `t` at or after the latest replacement).
    public func state(at t: Timestamp) -> RelevanceState {
        guard let timeline, let current = currentIndex(at: t) else {
            return RelevanceState(
                status: .none, score: 0, normalized: 0, since: nil, expires: nil, currentEntryDate: nil)
        }
        let currentDate = timeline.entries[current].date
        let source = inForceIndex[current]
        guard source >= 0, let relevance = timeline.entries[source].relevance else {
            return RelevanceState(
                status: .none, score: 0, normalized: 0, since: nil, expires: nil, currentEntryDate: currentDate)
        }
        let since = timeline.entries[source].date
        guard relevance.score > 0 else {
            return RelevanceState(
                status: .notRelevant, score: 0, normalized: 0, since: since, expires: nil,
                currentEntryDate: currentDate)
        }
        let expires = relevance.duration > 0 ? Self.expiry(of: since, duration: relevance.duration) : nil
        if let expires, t >= expires {
            return RelevanceState(
                status: .expired, score: 0, normalized: 0, since: since, expires: expires,
                currentEntryDate: currentDate)
        }
        // The entry in force is among entries 0...current, so the maximum is at least its score (> 0).
        let maximum = max(historicalMax, prefixMax[current])
        let normalized = min(1, max(0, relevance.score / maximum))
        return RelevanceState(
            status: .relevant, score: relevance.score, normalized: normalized, since: since, expires: expires,
            currentEntryDate: currentDate)
    }

    /// The first instant after `t` at which ``state(at:)`` changes: the next entry's date or the expiry of the
    /// relevance in force, whichever is first; `nil` when nothing changes any more.
    public func nextChange(after t: Timestamp) -> Timestamp? {
        guard let timeline else { return nil }
        let nextIndex = upperBound(t)
        var next = nextIndex < timeline.entries.count ? timeline.entries[nextIndex].date : nil
        if nextIndex > 0 {
            let source = inForceIndex[nextIndex - 1]
            if source >= 0, let relevance = timeline.entries[source].relevance, relevance.score > 0,
                relevance.duration > 0
            {
                let expires = Self.expiry(of: timeline.entries[source].date, duration: relevance.duration)
                if expires > t, next.map({ expires < $0 }) ?? true { next = expires }
            }
        }
        return next
    }

    /// Sets the timeline and rebuilds the prefix tables in one pass.
    private mutating func install(_ timeline: Timeline) {
        self.timeline = timeline
        inForceIndex = []
        prefixMax = []
        inForceIndex.reserveCapacity(timeline.entries.count)
        prefixMax.reserveCapacity(timeline.entries.count)
        var source = -1
        var maximum = 0.0
        for (index, entry) in timeline.entries.enumerated() {
            if let relevance = entry.relevance {
                source = index
                if relevance.score > maximum { maximum = relevance.score }
            }
            inForceIndex.append(source)
            prefixMax.append(maximum)
        }
    }

    /// The index of the latest entry dated at or before `t`, or `nil` when every entry is later.
    private func currentIndex(at t: Timestamp) -> Int? {
        let index = upperBound(t)
        return index > 0 ? index - 1 : nil
    }

    /// The number of entries dated at or before `t` (binary search; entries are sorted by date).
    private func upperBound(_ t: Timestamp) -> Int {
        guard let entries = timeline?.entries else { return 0 }
        var low = 0
        var high = entries.count
        while low < high {
            let middle = low + (high - low) / 2
            if entries[middle].date <= t { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// `date + duration`, saturating: a validated duration is finite but may be too large for a `Timestamp`.
    private static func expiry(of date: Timestamp, duration: Double) -> Timestamp {
        // A margin of a few ulps keeps the rounded microsecond count clear of overflowing `adding`.
        let room = Double(Int64.max - max(date.microseconds, 0)) - 4_096
        guard duration * 1_000_000 < room else {
            return Timestamp(microseconds: Int64.max, utcOffsetSeconds: date.utcOffsetSeconds)
        }
        return date.adding(seconds: duration)
    }
}
