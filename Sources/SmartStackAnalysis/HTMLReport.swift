import SmartStackCore

/// The analysis as one self-contained HTML file: inline CSS, no scripts, no network. Summary tables for
/// stacks and widgets, then per stack an SVG timeline — one lane per widget, a bar wherever it was on top,
/// coloured per widget with a legend, and a mark wherever the user swiped to a widget by hand.
///
/// The markup is well-formed XML (XHTML syntax), so XML tools can read it as well as browsers.
public struct HTMLReport: Sendable {
    public var report: AnalysisReport
    /// Where the entries came from, for the heading (`the local journal`, `files …`).
    public var source: String
    /// The offset of the wall clock times are shown on, in seconds east of UTC.
    public var utcOffsetSeconds: Int32

    public init(report: AnalysisReport, source: String, utcOffsetSeconds: Int32 = 0) {
        self.report = report
        self.source = source
        self.utcOffsetSeconds = utcOffsetSeconds
    }

    /// Layout of a timeline, in SVG user units.
    enum Layout {
        static let width = 1000.0
        static let labelWidth = 210.0
        static let laneHeight = 18.0
        static let laneGap = 4.0
        static let top = 8.0
        static let axisHeight = 26.0
        static var plotWidth: Double { width - labelWidth - 10 }
    }

    /// The widget colours: a qualitative palette, then hues spread by the golden angle.
    static let palette = [
        "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
        "#bab0ac", "#1f77b4", "#d62728",
    ]

    static func colour(_ index: Int) -> String {
        if index < palette.count { return palette[index] }
        let hue = Double(index - palette.count) * 137.508
        return "hsl(\(Int(hue.truncatingRemainder(dividingBy: 360))), 55%, 50%)"
    }

    /// The whole document.
    public func render() -> String {
        let allWidgets = Array(Set(report.stacks.flatMap(\.lanes) + report.widgets.map(\.widget))).sorted()
        var colours: [String: String] = [:]
        for (index, widget) in allWidgets.enumerated() { colours[widget] = Self.colour(index) }

        var html = """
            <!DOCTYPE html>
            <html xmlns="http://www.w3.org/1999/xhtml" lang="en">
            <head>
            <meta charset="utf-8"/>
            <meta name="generator" content="smartstackctl analyze"/>
            <title>smartstackd ranking report</title>
            <style>\(Self.css)</style>
            </head>
            <body>
            <h1>smartstackd ranking report</h1>

            """
        html += "<p class=\"range\">\(Self.escape(rangeText())) · source: \(Self.escape(source))</p>\n"
        html += "<p>\(entryText())</p>\n"
        for note in report.notes { html += "<p class=\"note\">Note: \(Self.escape(note))</p>\n" }
        html += machineTable()
        html += stackTable()
        html += widgetTable()
        for stack in report.stacks {
            html += "<section class=\"stack\" id=\"stack-\(Self.escape(Self.anchor(stack.stack)))\">\n"
            html += "<h2>Stack \(Self.escape(stack.stack))</h2>\n"
            html += timeline(stack, colours: colours)
            html += legend(stack, colours: colours)
            html += "</section>\n"
        }
        html += "</body>\n</html>\n"
        return html
    }

    // MARK: Text

    func rangeText() -> String {
        guard let start = report.start, let end = report.end else { return "no entries" }
        var text = "\(time(start)) to \(time(end))"
        if let seconds = report.seconds { text += " (\(Self.duration(seconds)))" }
        return text
    }

    func entryText() -> String {
        let entries = report.entries
        return "\(entries.orderChanged) order changes, \(entries.suggestionInserted) suggestions inserted, "
            + "\(entries.suggestionRemoved) removed, \(entries.reloadRequested) reloads requested, "
            + "\(entries.reloadWithheld) withheld, \(entries.engagement) engagement entries."
    }

    func time(_ microseconds: Int64) -> String {
        let text = Timestamp(microseconds: microseconds, utcOffsetSeconds: utcOffsetSeconds).rfc3339
        return String(text.prefix(10)) + " " + String(text.dropFirst(11).prefix(12))
    }

    /// An axis label as short as the span allows: `09:03:06.728` within a minute, `09:03:06` within a day,
    /// `11-21 09:03` beyond.
    func tickLabel(_ microseconds: Int64, span: Int64) -> String {
        let text = time(microseconds)
        if span < 60_000_000 { return String(text.dropFirst(11)) }
        if span < 86_400_000_000 { return String(text.dropFirst(11).prefix(8)) }
        return String(text.dropFirst(5).prefix(11))
    }

    // MARK: Tables

    /// The machines whose entries were read (none when the entries carry no machine id).
    func machineTable() -> String {
        guard !report.machines.isEmpty, report.machines.contains(where: { !$0.machineID.isEmpty }) else { return "" }
        var html = "<h2>Machines</h2>\n<table class=\"summary machines\">\n<thead><tr>"
        for header in [
            "machine", "machine id", "entries", "order changes", "stacks", "top changes", "suggestions inserted",
            "reloads requested", "reloads withheld", "engagement", "first", "last",
        ] {
            html += "<th>\(header)</th>"
        }
        html += "</tr></thead>\n<tbody>\n"
        for machine in report.machines {
            let cells = [
                Self.escape(machine.label), Self.escape(machine.machineID), String(machine.entries.total),
                String(machine.entries.orderChanged), String(machine.stacks), String(machine.topChanges),
                String(machine.entries.suggestionInserted), String(machine.entries.reloadRequested),
                String(machine.entries.reloadWithheld), String(machine.entries.engagement),
                machine.first.map(time) ?? "–", machine.last.map(time) ?? "–",
            ]
            html += "<tr>" + cells.map { "<td>\($0)</td>" }.joined() + "</tr>\n"
        }
        return html + "</tbody>\n</table>\n"
    }

    func stackTable() -> String {
        var html = "<h2>Stacks</h2>\n<table class=\"summary\">\n<thead><tr>"
        for header in [
            "stack", "decisions", "changes", "top changes", "per hour", "median on top", "rotation reasons",
            "manual swipes", "suggestions inserted", "reloads requested", "reloads withheld",
        ] {
            html += "<th>\(header)</th>"
        }
        html += "</tr></thead>\n<tbody>\n"
        for stack in report.stacks {
            let reasons = stack.rotationReasons.counts.map { "\($0.key) \($0.count)" }.joined(separator: ", ")
            let cells = [
                "<a href=\"#stack-\(Self.escape(Self.anchor(stack.stack)))\">\(Self.escape(stack.stack))</a>",
                String(stack.decisions), String(stack.changes), String(stack.topChanges),
                stack.topChangesPerHour.map { Self.number($0, 1) } ?? "–",
                stack.medianTimeOnTop.map(Self.duration) ?? "–", Self.escape(reasons), String(stack.manualSwipes),
                String(stack.suggestionsInserted), String(stack.reloadsRequested), String(stack.reloadsWithheld),
            ]
            html += "<tr>" + cells.map { "<td>\($0)</td>" }.joined() + "</tr>\n"
        }
        return html + "</tbody>\n</table>\n"
    }

    func widgetTable() -> String {
        let haveEngagement = report.entries.engagement > 0
        var html = "<h2>Widgets</h2>\n<table class=\"summary\">\n<thead><tr>"
        for header in [
            "widget", "stack", "share of top", "time on top", "surfaced", "by relevance", "by behaviour",
            "taps after surfaced",
            "engagement rate", "reloads requested", "reloads withheld",
        ] {
            html += "<th>\(header)</th>"
        }
        html += "</tr></thead>\n<tbody>\n"
        for widget in report.widgets {
            let cells = [
                Self.escape(widget.widget), Self.escape(widget.stack), Self.number(widget.shareOfTop * 100, 1) + "%",
                Self.duration(widget.timeOnTop), String(widget.surfaced), String(widget.surfacedByRelevance),
                String(widget.surfacedByBehaviour), haveEngagement ? String(widget.tapsAfterSurfaced) : "–",
                widget.engagementRate(haveEngagement: haveEngagement).map { Self.number($0 * 100, 1) + "%" } ?? "–",
                String(widget.reloadsRequested), String(widget.reloadsWithheld),
            ]
            html += "<tr>" + cells.map { "<td>\($0)</td>" }.joined() + "</tr>\n"
        }
        return html + "</tbody>\n</table>\n"
    }

    // MARK: Timeline

    /// The SVG timeline of one stack.
    func timeline(_ stack: StackSummary, colours: [String: String]) -> String {
        guard let reportStart = report.start, let reportEnd = report.end else { return "<p>No entries.</p>\n" }
        // Each stack on its own span: from --since (else its first entry) to --until (else the end its time on
        // top was counted to), so a replayed person's weeks fill the width however long the whole journal is.
        let start = report.since ?? stack.first ?? reportStart
        let end = max(start + 1, report.until ?? stack.tenures.map(\.end).max() ?? stack.last ?? reportEnd)
        let span = max(1, Double(end - start))
        let lanes = stack.lanes
        let laneIndex = Dictionary(lanes.enumerated().map { ($0.element, $0.offset) }) { first, _ in first }
        let height = Layout.top + Double(lanes.count) * (Layout.laneHeight + Layout.laneGap) + Layout.axisHeight
        func x(_ time: Int64) -> Double {
            Layout.labelWidth + Double(time - start) / span * Layout.plotWidth
        }
        func y(_ lane: Int) -> Double { Layout.top + Double(lane) * (Layout.laneHeight + Layout.laneGap) }

        var svg =
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" data-stack=\"\(Self.escape(stack.stack))\""
        svg += " width=\"\(Self.number(Layout.width, 0))\" height=\"\(Self.number(height, 0))\""
        svg += " viewBox=\"0 0 \(Self.number(Layout.width, 0)) \(Self.number(height, 0))\" role=\"img\">\n"
        svg += "<title>Which widget of stack \(Self.escape(stack.stack)) was on top when</title>\n"
        for (index, widget) in lanes.enumerated() {
            let colour = colours[widget] ?? "#888888"
            svg += "<g class=\"lane\" data-widget=\"\(Self.escape(widget))\">\n"
            svg +=
                "<rect class=\"lane-bg\" x=\"\(Self.number(Layout.labelWidth, 1))\" y=\"\(Self.number(y(index), 1))\""
            svg += " width=\"\(Self.number(Layout.plotWidth, 1))\" height=\"\(Self.number(Layout.laneHeight, 1))\"/>\n"
            svg += "<text class=\"lane-label\" x=\"\(Self.number(Layout.labelWidth - 6, 1))\""
            svg +=
                " y=\"\(Self.number(y(index) + Layout.laneHeight * 0.7, 1))\">\(Self.escape(Self.shortened(widget)))</text>\n"
            // Bars closer than half a unit are drawn as one: a busy journal would otherwise draw thousands.
            var pending: (x0: Double, x1: Double, title: String)?
            func flush() {
                guard let bar = pending else { return }
                svg += "<rect class=\"on-top\" x=\"\(Self.number(bar.x0, 2))\" y=\"\(Self.number(y(index) + 2, 1))\""
                svg +=
                    " width=\"\(Self.number(max(0.8, bar.x1 - bar.x0), 2))\" height=\"\(Self.number(Layout.laneHeight - 4, 1))\""
                svg += " fill=\"\(colour)\"><title>\(Self.escape(bar.title))</title></rect>\n"
                pending = nil
            }
            for tenure in stack.tenures where tenure.widget == widget {
                let x0 = x(tenure.start)
                let x1 = x(tenure.end)
                if let bar = pending, x0 <= bar.x1 + 0.5 {
                    pending?.x1 = max(bar.x1, x1)
                    continue
                }
                flush()
                let title =
                    "\(widget) on top \(time(tenure.start)) – \(time(tenure.end)) (\(Self.duration(tenure.seconds)))"
                    + (tenure.reason.map { ", \($0)" } ?? "")
                pending = (x0, x1, title)
            }
            flush()
            svg += "</g>\n"
        }
        if !stack.swipes.isEmpty {
            svg += "<g class=\"swipes\">\n"
            for swipe in stack.swipes {
                guard let lane = laneIndex[swipe.widget] else { continue }
                let px = x(swipe.time)
                let top = y(lane)
                svg += "<path class=\"swipe\" d=\"M\(Self.number(px - 4, 2)),\(Self.number(top - 3, 2)) "
                svg +=
                    "L\(Self.number(px + 4, 2)),\(Self.number(top - 3, 2)) L\(Self.number(px, 2)),\(Self.number(top + 4, 2)) Z\">"
                svg +=
                    "<title>\(Self.escape("swiped to \(swipe.widget) by hand at \(time(swipe.time))"))</title></path>\n"
            }
            svg += "</g>\n"
        }
        // The time axis: five ticks.
        let axisY = y(lanes.count) + 2
        svg += "<g class=\"axis\">\n"
        svg += "<line x1=\"\(Self.number(Layout.labelWidth, 1))\" y1=\"\(Self.number(axisY, 1))\""
        svg += " x2=\"\(Self.number(Layout.labelWidth + Layout.plotWidth, 1))\" y2=\"\(Self.number(axisY, 1))\"/>\n"
        for tick in 0...4 {
            let time = start + Int64(Double(end - start) * Double(tick) / 4)
            let px = x(time)
            let anchor = tick == 0 ? "start" : tick == 4 ? "end" : "middle"
            svg += "<line x1=\"\(Self.number(px, 1))\" y1=\"\(Self.number(axisY, 1))\" x2=\"\(Self.number(px, 1))\""
            svg += " y2=\"\(Self.number(axisY + 4, 1))\"/>\n"
            svg += "<text x=\"\(Self.number(px, 1))\" y=\"\(Self.number(axisY + 16, 1))\" text-anchor=\"\(anchor)\">"
            svg += "\(Self.escape(tickLabel(time, span: end - start)))</text>\n"
        }
        svg += "</g>\n</svg>\n"
        return svg
    }

    func legend(_ stack: StackSummary, colours: [String: String]) -> String {
        var html = "<ul class=\"legend\">\n"
        for widget in stack.lanes {
            let share = stack.timeOnTop.first { $0.widget == widget }?.share ?? 0
            html += "<li><span class=\"swatch\" style=\"background:\(colours[widget] ?? "#888888")\"></span>"
            html += "\(Self.escape(widget)) <span class=\"share\">\(Self.number(share * 100, 1))% on top</span></li>\n"
        }
        if !stack.swipes.isEmpty {
            html += "<li><span class=\"swipe-mark\">▼</span> swiped to by hand (\(stack.swipes.count))</li>\n"
        }
        return html + "</ul>\n"
    }

    // MARK: Helpers

    static let css = """
        body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222;background:#fff}
        h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em}
        table.summary{border-collapse:collapse;margin:.5em 0}
        table.summary th,table.summary td{border:1px solid #ccc;padding:.25em .6em;text-align:right}
        table.summary th:first-child,table.summary td:first-child{text-align:left}
        table.summary th{background:#f3f3f3}
        .note{color:#8a5a00}.range{color:#555}
        svg.timeline{display:block;max-width:100%;height:auto}
        .lane-bg{fill:#f6f6f6}.lane-label{font:11px system-ui,sans-serif;text-anchor:end;fill:#333}
        .axis line{stroke:#999}.axis text{font:10px system-ui,sans-serif;fill:#555}
        .swipe{fill:#222}
        ul.legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.4em 1.2em}
        .swatch{display:inline-block;width:.9em;height:.9em;margin-right:.3em;vertical-align:-.1em;border-radius:2px}
        .share{color:#666}
        """

    /// Text escaped for XML content and attribute values.
    public static func escape(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default:
                // Control characters other than tab and newline are not allowed in XML 1.0.
                if scalar.value < 0x20, scalar != "\t", scalar != "\n" {
                    result += "\u{FFFD}"
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result
    }

    /// An id fragment: characters other than letters, digits, `-` and `_` as `-`.
    static func anchor(_ text: String) -> String {
        String(text.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") ? $0 : "-" })
    }

    /// A lane label of at most 32 characters (the full id is the lane's `data-widget` and the bars' titles).
    static func shortened(_ text: String) -> String {
        text.count <= 32 ? text : String(text.prefix(15)) + "…" + String(text.suffix(16))
    }

    static func number(_ value: Double, _ decimals: Int) -> String {
        guard value.isFinite else { return "0" }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        if decimals == 0 { return String(Int64(rounded)) }
        var text = String(rounded)
        if text.contains("e") { text = String(Int64(rounded)) }
        return text
    }

    /// `4min 12s`, `850ms`, `2h 5min`.
    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "–" }
        if seconds < 1 { return "\(Int((seconds * 1_000).rounded()))ms" }
        if seconds < 60 { return number(seconds, 1) + "s" }
        let total = Int64(seconds.rounded())
        let parts: [(Int64, String)] = [
            (total / 86_400, "d"), (total % 86_400 / 3_600, "h"), (total % 3_600 / 60, "min"), (total % 60, "s"),
        ]
        let first = parts.firstIndex { $0.0 > 0 } ?? 3
        return parts[first..<min(first + 2, 4)].filter { $0.0 > 0 }.map { "\($0.0)\($0.1)" }.joined(separator: " ")
    }
}
