public import SmartStackAnalysis
import SmartStackCore

/// An ``AnalysisReport`` for people: the range, then tables per stack, time on top, and per widget.
public enum AnalysisRenderer {
    public static func render(
        _ report: AnalysisReport, source: String, utcOffsetSeconds: Int32 = 0, style: Style = .plain
    ) -> String {
        func time(_ microseconds: Int64) -> String {
            let text = Timestamp(microseconds: microseconds, utcOffsetSeconds: utcOffsetSeconds).rfc3339
            return String(text.prefix(10)) + " " + String(text.dropFirst(11).prefix(12))
        }
        var lines: [String] = []
        var range = "Journal: \(Format.printable(source))"
        if let start = report.start, let end = report.end {
            range += ", \(time(start)) to \(time(end))"
            if let seconds = report.seconds { range += " (\(Format.duration(seconds)))" }
        }
        lines.append(style.bold(range))
        let entries = report.entries
        lines.append(
            "\(Format.count(entries.orderChanged)) order changes, \(Format.count(entries.suggestionInserted)) suggestions "
                + "inserted, \(Format.count(entries.suggestionRemoved)) removed, \(Format.count(entries.reloadRequested)) "
                + "reloads requested, \(Format.count(entries.reloadWithheld)) withheld, "
                + "\(Format.count(entries.engagement)) engagement entries")
        for note in report.notes { lines.append(style.warn("note: ") + Format.printable(note)) }
        if report.machines.contains(where: { !$0.machineID.isEmpty }) {
            lines.append("")
            var machines = Table([
                .init("machine"), .init("machine id"), .init("entries", .right), .init("order changes", .right),
                .init("stacks", .right), .init("top changes", .right), .init("suggested", .right),
                .init("reloads", .right), .init("withheld", .right), .init("engagement", .right), .init("first"),
                .init("last"),
            ])
            for machine in report.machines {
                machines.append([
                    Format.printable(machine.label), Format.printable(machine.machineID),
                    Format.count(machine.entries.total),
                    Format.count(machine.entries.orderChanged), Format.count(machine.stacks),
                    Format.count(machine.topChanges), Format.count(machine.entries.suggestionInserted),
                    Format.count(machine.entries.reloadRequested), Format.count(machine.entries.reloadWithheld),
                    Format.count(machine.entries.engagement), machine.first.map(time) ?? "-",
                    machine.last.map(time) ?? "-",
                ])
            }
            lines.append(machines.render(style: style))
        }
        guard !report.stacks.isEmpty || !report.widgets.isEmpty else { return lines.joined(separator: "\n") }

        lines.append("")
        var stacks = Table([
            .init("stack"), .init("decisions", .right), .init("changes", .right), .init("top changes", .right),
            .init("per hour", .right), .init("median on top", .right), .init("swipes", .right),
            .init("suggested", .right), .init("reloads", .right), .init("withheld", .right), .init("rotation reasons"),
        ])
        for stack in report.stacks {
            stacks.append([
                Format.printable(stack.stack), Format.count(stack.decisions), Format.count(stack.changes),
                Format.count(stack.topChanges),
                stack.topChangesPerHour.map { Format.number($0, decimals: 1) } ?? "-",
                stack.medianTimeOnTop.map(Format.duration) ?? "-", Format.count(stack.manualSwipes),
                Format.count(stack.suggestionsInserted), Format.count(stack.reloadsRequested),
                Format.count(stack.reloadsWithheld),
                stack.rotationReasons.counts.map { "\(Format.printable($0.key)) \($0.count)" }.joined(separator: ", "),
            ])
        }
        lines.append(stacks.render(style: style))

        for stack in report.stacks where !stack.timeOnTop.isEmpty {
            lines.append("")
            lines.append(style.bold("Time on top in \(Format.printable(stack.stack))"))
            var table = Table([.init("widget"), .init("share", .right), .init("time", .right), .init("")])
            for share in stack.timeOnTop.prefix(12) {
                table.append([
                    Format.printable(share.widget), Format.percent(share.share), Format.duration(share.seconds),
                    style.accent(Format.bar(share.share, width: 30)),
                ])
            }
            if stack.timeOnTop.count > 12 { table.append(["(\(stack.timeOnTop.count - 12) more)"]) }
            lines.append(table.render(style: style))
        }

        let haveEngagement = report.entries.engagement > 0
        lines.append("")
        var widgets = Table([
            .init("widget"), .init("stack"), .init("surfaced", .right), .init("relevance", .right),
            .init("behaviour", .right), .init("other", .right), .init("taps after", .right),
            .init("engagement", .right),
            .init("reloads", .right), .init("withheld", .right),
        ])
        for widget in report.widgets {
            widgets.append([
                Format.printable(widget.widget), widget.stack.isEmpty ? "-" : Format.printable(widget.stack),
                Format.count(widget.surfaced),
                Format.count(widget.surfacedByRelevance), Format.count(widget.surfacedByBehaviour),
                Format.count(widget.surfaced - widget.surfacedByRelevance - widget.surfacedByBehaviour),
                haveEngagement ? Format.count(widget.tapsAfterSurfaced) : "-",
                widget.engagementRate(haveEngagement: haveEngagement).map(Format.percent) ?? "-",
                Format.count(widget.reloadsRequested), Format.count(widget.reloadsWithheld),
            ])
        }
        lines.append(widgets.render(style: style))
        return lines.joined(separator: "\n")
    }
}
