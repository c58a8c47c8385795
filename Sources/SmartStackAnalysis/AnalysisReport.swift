/// What the journal says about a service's ranking over a time range: per stack and per widget.
///
/// Times are microseconds since the Unix epoch; durations are seconds.
public struct AnalysisReport: Sendable, Hashable {
    /// The `--since` bound asked for.
    public var since: Int64?
    /// The `--until` bound asked for.
    public var until: Int64?
    /// The start of the analysed span: `since`, or the first entry read.
    public var start: Int64?
    /// The end of the analysed span: `until`, or the last entry read. The widget on top at the last entry of a
    /// stack is counted as on top until here, unless (without `until`) the stack's entries end more than a day
    /// before it: such a stack is counted to its own last entry (`Analyzer.staleStackSpan`).
    public var end: Int64?
    /// How many entries of each type were read.
    public var entries: EntryCounts
    /// One summary per stack, by stack id.
    public var stacks: [StackSummary]
    /// One summary per widget: by stack, then most time on top, most surfaced, widget id.
    public var widgets: [WidgetSummary]
    /// Caveats a reader should know (no engagement entries, reloads of widgets in no stack, …).
    public var notes: [String]
    /// One summary per machine whose entries were read (`_MACHINE_ID`), by label.
    public var machines: [MachineSummary] = []

    /// The analysed span in seconds, when there is one.
    public var seconds: Double? {
        guard let start, let end, end >= start else { return nil }
        return Double(end - start) / 1_000_000
    }

    public init(
        since: Int64? = nil, until: Int64? = nil, start: Int64? = nil, end: Int64? = nil,
        entries: EntryCounts = EntryCounts(), stacks: [StackSummary] = [], widgets: [WidgetSummary] = [],
        notes: [String] = []
    ) {
        self.since = since
        self.until = until
        self.start = start
        self.end = end
        self.entries = entries
        self.stacks = stacks
        self.widgets = widgets
        self.notes = notes
    }
}

/// How many entries of each type the analysis read.
public struct EntryCounts: Sendable, Hashable {
    public var orderChanged = 0
    public var suggestionInserted = 0
    public var suggestionRemoved = 0
    public var reloadRequested = 0
    public var reloadWithheld = 0
    public var engagement = 0

    public init() {}

    /// Every entry read.
    public var total: Int {
        orderChanged + suggestionInserted + suggestionRemoved + reloadRequested + reloadWithheld + engagement
    }
}

/// A count per key (a reason code, a widget), kept in descending count then key order.
public struct Tally: Sendable, Hashable {
    /// `(key, count)` pairs, largest first, ties by key.
    public private(set) var counts: [(key: String, count: Int)] = []

    public init() {}

    /// Adds one to `key` (an empty key counts as `unknown`), keeping the order.
    public mutating func add(_ key: String, count: Int = 1) {
        let key = key.isEmpty ? "unknown" : key
        var index: Int
        if let found = counts.firstIndex(where: { $0.key == key }) {
            counts[found].count += count
            index = found
        } else {
            counts.append((key: key, count: count))
            index = counts.count - 1
        }
        while index > 0, Self.before(counts[index], counts[index - 1]) {
            counts.swapAt(index, index - 1)
            index -= 1
        }
    }

    private static func before(_ lhs: (key: String, count: Int), _ rhs: (key: String, count: Int)) -> Bool {
        lhs.count != rhs.count ? lhs.count > rhs.count : lhs.key < rhs.key
    }

    /// The count of `key`, 0 when absent.
    public subscript(_ key: String) -> Int { counts.first { $0.key == key }?.count ?? 0 }

    /// The sum of every count.
    public var total: Int { counts.reduce(0) { $0 + $1.count } }

    public static func == (lhs: Tally, rhs: Tally) -> Bool {
        lhs.counts.elementsEqual(rhs.counts) { $0.key == $1.key && $0.count == $1.count }
    }

    public func hash(into hasher: inout Hasher) {
        for (key, count) in counts {
            hasher.combine(key)
            hasher.combine(count)
        }
    }
}

/// One stretch of time a widget spent on top of a stack.
public struct Tenure: Sendable, Hashable {
    /// The widget on top.
    public var widget: String
    /// From (µs since the epoch).
    public var start: Int64
    /// Until (µs since the epoch).
    public var end: Int64
    /// The reason code of the entry that put it on top; `nil` when it was on top before the span began.
    public var reason: String?
    /// Whether a later top change in the span ended it (otherwise the span's end cut it).
    public var closed: Bool

    /// Its length in seconds.
    public var seconds: Double { Double(end - start) / 1_000_000 }
}

/// A widget's share of a stack's time on top.
public struct TopShare: Sendable, Hashable {
    public var widget: String
    /// Seconds on top within the span.
    public var seconds: Double
    /// `seconds` over the time any widget was known to be on top, 0–1.
    public var share: Double
}

/// What the journal says about one stack.
public struct StackSummary: Sendable, Hashable {
    /// The stack's id.
    public var stack: String
    /// Order-changed entries in the span.
    public var decisions = 0
    /// Published order changes they stand for (the sum of `SMARTSTACK_COUNT`).
    public var changes = 0
    /// Entries whose top differs from the one before.
    public var topChanges = 0
    /// `topChanges` per hour of the span; `nil` for an empty span.
    public var topChangesPerHour: Double?
    /// Each widget's time on top, largest first.
    public var timeOnTop: [TopShare] = []
    /// The median length of the stretches on top that a top change ended; `nil` when none did.
    public var medianTimeOnTop: Double?
    /// Why the top changed: the reason code of each top-changing entry.
    public var rotationReasons = Tally()
    /// Top changes to a widget the user swiped to by hand (reason `manualSwipe`).
    public var manualSwipes = 0
    /// Suggestion-inserted entries.
    public var suggestionsInserted = 0
    /// Suggestion-removed entries.
    public var suggestionsRemoved = 0
    /// Reload-requested entries for the stack's widgets.
    public var reloadsRequested = 0
    /// Reload-withheld entries for the stack's widgets.
    public var reloadsWithheld = 0
    /// The widgets seen in the stack's orders, by first appearance: the lanes of its timeline.
    public var lanes: [String] = []
    /// Who was on top when, in time order.
    public var tenures: [Tenure] = []
    /// When the user swiped to a widget by hand: `(time, widget)`.
    public var swipes: [Swipe] = []
    /// The first and last order-changed entries' times.
    public var first: Int64?
    public var last: Int64?

    public init(stack: String) {
        self.stack = stack
    }
}

/// A manual swipe seen in the journal.
public struct Swipe: Sendable, Hashable {
    public var time: Int64
    public var widget: String

    public init(time: Int64, widget: String) {
        self.time = time
        self.widget = widget
    }
}

/// What the journal says about one widget.
public struct WidgetSummary: Sendable, Hashable {
    /// The instance id.
    public var widget: String
    /// The stack whose orders hold it; empty when it appears in none (a reload of a widget in no order read).
    public var stack: String
    /// Times it became the top, by reason code.
    public var surfacedBy = Tally()
    /// Seconds on top within the span.
    public var timeOnTop: Double = 0
    /// Its share of the stack's time on top, 0–1.
    public var shareOfTop: Double = 0
    /// Tap entries for it.
    public var taps = 0
    /// Taps while it was on top after the service put it there (by relevance, behaviour, …, not by a swipe).
    public var tapsAfterSurfaced = 0
    /// Times the service surfaced it (any reason but `manualSwipe`, `pinned`, `userOrder`).
    public var serviceSurfacings = 0
    /// Of those, how many were followed by a tap while it stayed on top.
    public var surfacingsWithTap = 0
    /// Reload-requested entries.
    public var reloadsRequested = 0
    /// Reload-withheld entries.
    public var reloadsWithheld = 0

    public init(widget: String, stack: String) {
        self.widget = widget
        self.stack = stack
    }

    /// Every time it became the top.
    public var surfaced: Int { surfacedBy.total }
    /// Times it became the top by relevance.
    public var surfacedByRelevance: Int { surfacedBy["relevance"] }
    /// Times it became the top by learned behaviour.
    public var surfacedByBehaviour: Int { surfacedBy["behaviour"] }

    /// `surfacingsWithTap / serviceSurfacings`; `nil` when there is no engagement data or no surfacing.
    public func engagementRate(haveEngagement: Bool) -> Double? {
        guard haveEngagement, serviceSurfacings > 0 else { return nil }
        return Double(surfacingsWithTap) / Double(serviceSurfacings)
    }
}
