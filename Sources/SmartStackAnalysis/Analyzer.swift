/// Aggregates decision records into an ``AnalysisReport``: a pure function of the records and the range.
///
/// Per stack it replays the order-changed entries in time order and follows who is on top: from an entry's
/// time until the next entry with another top (or the span's end). When the span starts at `since`, the widget
/// that the first entry's previous order had on top is counted as on top from `since`.
public struct Analyzer: Sendable {
    /// The `--since` bound (µs), if any.
    public var since: Int64?
    /// The `--until` bound (µs), if any.
    public var until: Int64?

    public init(since: Int64? = nil, until: Int64? = nil) {
        self.since = since
        self.until = until
    }

    /// Reasons that mean the service did not choose the top itself.
    static let userChosenReasons: Set<String> = ["manualSwipe", "pinned", "userOrder"]

    /// The report for `records` (any order; records outside the range are ignored).
    public func analyze(_ input: [DecisionRecord]) -> AnalysisReport {
        let since = self.since
        let until = self.until
        let records = input.enumerated()
            .filter { item in
                (since.map { item.element.time >= $0 } ?? true) && (until.map { item.element.time <= $0 } ?? true)
            }
            .sorted { $0.element.time != $1.element.time ? $0.element.time < $1.element.time : $0.offset < $1.offset }
            .map(\.element)
        var report = AnalysisReport(since: since, until: until)
        report.start = since ?? records.first?.time
        report.end = until ?? records.last?.time

        // Which stacks each widget is in, from the orders: a shell's instance ids are unique over all stacks, but a
        // suggestion's id is the same in every stack it is suggested in.
        var stacksOf: [String: [String]] = [:]
        func place(_ widget: String, in stack: String) {
            if !(stacksOf[widget]?.contains(stack) ?? false) { stacksOf[widget, default: []].append(stack) }
        }
        var perStack: [String: [DecisionRecord]] = [:]
        var reloads: [DecisionRecord] = []
        for record in records {
            switch record.event {
            case .orderChanged(let change):
                report.entries.orderChanged += 1
                for widget in change.previousOrder + change.order { place(widget, in: change.stack) }
                perStack[change.stack, default: []].append(record)
            case .suggestionInserted(let stack, let widget):
                report.entries.suggestionInserted += 1
                place(widget, in: stack)
                perStack[stack, default: []].append(record)
            case .suggestionRemoved(let stack, _):
                report.entries.suggestionRemoved += 1
                perStack[stack, default: []].append(record)
            case .engagement(let stack, _, _):
                report.entries.engagement += 1
                perStack[stack, default: []].append(record)
            case .reloadRequested:
                report.entries.reloadRequested += 1
                reloads.append(record)
            case .reloadWithheld:
                report.entries.reloadWithheld += 1
                reloads.append(record)
            }
        }

        var widgets: [WidgetKey: WidgetSummary] = [:]
        var stacks: [String: StackSummary] = [:]
        for (stack, stackRecords) in perStack {
            // A stack whose entries end more than a day before the report's (a replayed log on its own time, a
            // stack no longer used) is counted to its own last entry, not to the others' end.
            var end = report.end
            if until == nil, let last = stackRecords.last?.time, let reportEnd = report.end,
                reportEnd - last > Self.staleStackSpan
            {
                end = last
            }
            stacks[stack] = summarize(stack: stack, stackRecords, start: report.start, end: end, widgets: &widgets)
        }

        var unplaced = 0
        for record in reloads {
            let (id, requested): (String, Bool)
            switch record.event {
            case .reloadRequested(let widget, _): (id, requested) = (widget, true)
            case .reloadWithheld(let widget, _): (id, requested) = (widget, false)
            default: continue
            }
            // A reload names the widget, not a stack: it counts in every stack that shows the widget.
            let placed = stacksOf[id] ?? []
            if placed.isEmpty { unplaced += 1 }
            for stack in placed.isEmpty ? [""] : placed {
                let key = WidgetKey(stack: stack, widget: id)
                var summary = widgets[key] ?? WidgetSummary(widget: id, stack: stack)
                if requested { summary.reloadsRequested += 1 } else { summary.reloadsWithheld += 1 }
                widgets[key] = summary
                if var stackSummary = stacks[stack] {
                    if requested { stackSummary.reloadsRequested += 1 } else { stackSummary.reloadsWithheld += 1 }
                    stacks[stack] = stackSummary
                }
            }
        }

        report.stacks = stacks.values.sorted { $0.stack < $1.stack }
        // By stack, then the most time on top first.
        report.widgets = widgets.values.sorted {
            if $0.stack != $1.stack { return $0.stack < $1.stack }
            if $0.timeOnTop != $1.timeOnTop { return $0.timeOnTop > $1.timeOnTop }
            if $0.surfaced != $1.surfaced { return $0.surfaced > $1.surfaced }
            return $0.widget < $1.widget
        }
        if report.entries.engagement == 0 {
            report.notes.append(
                "no engagement entries in the range (SMARTSTACK_ENGAGEMENT): taps and engagement rates are unknown")
        }
        if unplaced > 0 {
            report.notes.append("\(unplaced) reload entries for widgets that appear in no order read")
        }
        if records.isEmpty {
            report.notes.append("no smartstackd decision entries in the range")
        }
        return report
    }

    /// A widget's row: the same id in two stacks (a suggestion) is two rows.
    struct WidgetKey: Hashable {
        var stack: String
        var widget: String
    }

    /// How much older than the report's end a stack's last entry may be before its time on top ends there: a day.
    static let staleStackSpan: Int64 = 86_400 * 1_000_000

    /// One stack's summary from its records in time order; updates the widgets it touches.
    private func summarize(
        stack: String, _ records: [DecisionRecord], start: Int64?, end: Int64?,
        widgets: inout [WidgetKey: WidgetSummary]
    ) -> StackSummary {
        var summary = StackSummary(stack: stack)
        var lanes: [String] = []
        var laneSet: Set<String> = []
        func lane(_ widget: String) {
            if !widget.isEmpty, laneSet.insert(widget).inserted { lanes.append(widget) }
        }
        func update(_ id: String, _ body: (inout WidgetSummary) -> Void) {
            let key = WidgetKey(stack: stack, widget: id)
            var value = widgets[key] ?? WidgetSummary(widget: id, stack: stack)
            body(&value)
            widgets[key] = value
        }

        /// The top now, since when (`began`: whether that is when it came to the top, or only since when the range
        /// tells), why, and whether a tap followed this stretch yet.
        var top: (widget: String, since: Int64, began: Bool, reason: String?, tapped: Bool)?
        var knownTop: String?
        /// Ends the current stretch at `time`; `ended` when it ended there (a new top), not at the range's end. A
        /// stretch is closed, and counts for the median, only when both its ends are known.
        func close(at time: Int64, ended: Bool) {
            guard let current = top, !current.widget.isEmpty, time >= current.since else { return }
            summary.tenures.append(
                Tenure(
                    widget: current.widget, start: current.since, end: time, reason: current.reason,
                    closed: ended && current.began))
        }

        for record in records {
            switch record.event {
            case .orderChanged(let change):
                summary.decisions += 1
                summary.changes += change.count
                summary.first = summary.first ?? record.time
                summary.last = record.time
                for widget in change.previousOrder + change.order { lane(widget) }
                let previous = knownTop ?? change.previousOrder.first
                if top == nil, let previous, let since, record.time > since {
                    // On top from the start of the span, as far as the first entry tells.
                    top = (previous, since, false, nil, false)
                }
                knownTop = change.top
                guard change.top != previous else {
                    // Already on top before this entry; since when, the range does not tell.
                    if top == nil { top = (change.top, record.time, false, nil, false) }
                    continue
                }
                close(at: record.time, ended: true)
                top = (change.top, record.time, previous != nil, change.reason, false)
                guard previous != nil, !change.top.isEmpty else { continue }
                summary.topChanges += 1
                summary.rotationReasons.add(change.reason)
                if change.reason == "manualSwipe" {
                    summary.manualSwipes += 1
                    summary.swipes.append(Swipe(time: record.time, widget: change.top))
                }
                update(change.top) { widget in
                    widget.surfacedBy.add(change.reason)
                    if !Self.userChosenReasons.contains(change.reason) { widget.serviceSurfacings += 1 }
                }
            case .suggestionInserted(_, let widget):
                summary.suggestionsInserted += 1
                lane(widget)
            case .suggestionRemoved:
                summary.suggestionsRemoved += 1
            case .engagement(_, let id, let kind):
                if kind == "swipeTo" { summary.swipes.append(Swipe(time: record.time, widget: id)) }
                guard kind == "tap" else { continue }
                let afterSurfaced =
                    top.map { $0.widget == id && !Self.userChosenReasons.contains($0.reason ?? "manualSwipe") } ?? false
                update(id) { widget in
                    widget.taps += 1
                    if afterSurfaced {
                        widget.tapsAfterSurfaced += 1
                        if top?.tapped == false { widget.surfacingsWithTap += 1 }
                    }
                }
                if afterSurfaced { top?.tapped = true }
            case .reloadRequested, .reloadWithheld:
                continue
            }
        }
        if let end { close(at: end, ended: false) }

        summary.lanes = lanes
        summary.swipes.sort { $0.time < $1.time }
        var onTop: [String: Double] = [:]
        for tenure in summary.tenures { onTop[tenure.widget, default: 0] += tenure.seconds }
        let covered = onTop.values.reduce(0, +)
        summary.timeOnTop = onTop.map {
            TopShare(widget: $0.key, seconds: $0.value, share: covered > 0 ? $0.value / covered : 0)
        }
        .sorted { $0.seconds != $1.seconds ? $0.seconds > $1.seconds : $0.widget < $1.widget }
        for share in summary.timeOnTop {
            update(share.widget) { widget in
                widget.timeOnTop = share.seconds
                widget.shareOfTop = share.share
            }
        }
        summary.medianTimeOnTop = Self.median(summary.tenures.filter(\.closed).map(\.seconds))
        // Over the stack's own span: from --since, else from its first entry (stacks of a replay, or of a fleet,
        // start at different times).
        if let spanStart = since ?? summary.first ?? start, let end, end > spanStart {
            summary.topChangesPerHour = Double(summary.topChanges) / (Double(end - spanStart) / 3_600_000_000)
        }
        for widget in lanes where widgets[WidgetKey(stack: stack, widget: widget)] == nil {
            widgets[WidgetKey(stack: stack, widget: widget)] = WidgetSummary(widget: widget, stack: stack)
        }
        return summary
    }

    /// The median of `values`; `nil` when empty.
    static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}
