public import SmartStackCore
public import SmartStackProtocol

/// An `Explain` reply for people: the stack's state, the order, then one block per widget with every input
/// of its place — score, signals, relevance, stability, budget, pin and suggestion state.
public enum ExplainRenderer {
    public static func render(_ reply: JSONObject, style: Style = .plain) -> String {
        let reference = reply.time("date") ?? Timestamp(microseconds: 0)
        var lines: [String] = []
        let stack = reply.string("stack") ?? "?"
        lines.append(
            style.bold("Stack \(stack)")
                + " · revision \(reply.int("revision").map(String.init) ?? "?") · explained at "
                + (reply.string("date").map { _ in Format.time(reference) } ?? "?"))
        let developerMode = reply.bool("developerMode") == true
        var settings = [
            "Smart Rotate " + onOff(reply.bool("smartRotate"), style),
            "Widget Suggestions " + onOff(reply.bool("suggestions"), style),
            "developer mode " + (developerMode ? style.warn("on (stability limits lifted)") : "off"),
        ]
        if let looks = reply.int("learnedFromLooks") { settings.append("learned from \(Format.count(looks)) looks") }
        if let ranker = reply.string("ranker"), ranker != "model" {
            settings.append(style.warn("ordered by the \(ranker) fallback (it has recently predicted better)"))
        }
        lines.append(settings.joined(separator: " · "))
        if let held = reply.string("heldTop") {
            let margin = reply.double("holdMargin").map { Format.number($0) } ?? "?"
            // Under a Live Activity the held widget is first among the widgets, not on top (its block says so).
            let place =
                reply.objects("order").first?.string("reason") == "liveActivity"
                ? "first among the widgets (below the Live Activities)" : "on top"
            lines.append(
                style.warn("\(held) held \(place): a challenger is likelier, but not \(margin) times as likely"))
        }
        if let waiting = reply.string("withheldSuggestion") {
            lines.append(style.warn("suggestion \(waiting) withheld: the minimum time on top has not passed"))
        }
        var rotation: [String] = []
        if let last = reply.time("lastRotation") {
            rotation.append("last rotation " + Format.timeAndRelative(last, reference: reference))
        } else {
            rotation.append("no rotation yet")
        }
        if let next = reply.time("nextRotationAllowed") {
            rotation.append(
                "next rotation allowed "
                    + (next <= reference ? style.good("now") : Format.timeAndRelative(next, reference: reference)))
        }
        lines.append(rotation.joined(separator: " · "))
        lines.append("")

        let order = reply.objects("order")
        let widgets = reply.objects("widgets")
        if !order.isEmpty {
            var table = Table([
                .init("#", .right), .init("widget"), .init("score", .right), .init("behaviour", .right),
                .init("relevance", .right), .init("reason"), .init("flags"),
            ])
            for entry in order {
                let instance = entry.string("instance") ?? ""
                let explained = widgets.first { $0.string("instance") == instance }
                var flags: [String] = []
                if entry.bool("pinned") == true { flags.append("pinned") }
                if entry.bool("suggested") == true { flags.append("suggested") }
                if explained?.bool("rotationLimited") == true { flags.append("rotation withheld") }
                if explained?.bool("suppressedByGroup") == true { flags.append("suppressed by group") }
                table.append([
                    entry.int("position").map { String($0 + 1) } ?? "", instance,
                    entry.double("score").map { Format.number($0) } ?? "",
                    explained?.double("behaviour").map { Format.number($0) } ?? "-",
                    explained?.double("relevance").map { Format.number($0) } ?? "-",
                    entry.string("reason") ?? "", style.accent(flags.joined(separator: ", ")),
                ])
            }
            lines.append(table.render(style: style))
        } else {
            lines.append("(the stack shows nothing)")
        }

        lines += LiveActivityRenderer.render(order, reference: reference, style: style)
        let sorted = widgets.sorted { position($0) < position($1) }
        for widget in sorted {
            lines.append("")
            lines += block(widget, reference: reference, developerMode: developerMode, style: style)
        }
        let suggestions = order.filter { $0.bool("suggested") == true }
        for suggestion in suggestions
        where !widgets.contains(where: { $0.string("instance") == suggestion.string("instance") }) {
            lines.append("")
            lines.append(
                style.bold("\(place(suggestion)). \(suggestion.string("instance") ?? "?")") + " "
                    + style.accent("(suggestion)"))
            lines.append(row("Reason", "suggestion — " + ReasonText.describe("suggestion")))
            lines.append(
                row(
                    "Score",
                    (suggestion.double("score").map { Format.number($0) } ?? "?")
                        + "  (not in the stack: Widget Suggestions inserted it for now)"))
            lines += signalRows(suggestion.object("contributions"), style: style)
        }
        return lines.joined(separator: "\n")
    }

    /// A widget's place as printed (its position + 1), or `?` without one.
    private static func place(_ object: JSONObject) -> String {
        guard let value = object.int("position"), value >= 0 else { return "?" }
        return "\(value + 1)"
    }

    /// A widget's position for sorting; widgets not in the order (-1) go last.
    private static func position(_ object: JSONObject) -> Int {
        let value = object.int("position") ?? -1
        return value < 0 ? Int.max : value
    }

    private static func onOff(_ flag: Bool?, _ style: Style) -> String {
        flag == false ? style.dim("off") : "on"
    }

    /// `   Label        text` with the label column aligned.
    private static func row(_ label: String, _ text: String) -> String {
        "   " + label + String(repeating: " ", count: max(1, 12 - label.count)) + text
    }

    /// The block of one explained widget.
    static func block(_ widget: JSONObject, reference: Timestamp, developerMode: Bool, style: Style) -> [String] {
        var lines: [String] = []
        let instance = widget.string("instance") ?? "?"
        let place = widget.int("position").map { $0 < 0 ? "not shown" : "\($0 + 1)." } ?? "?"
        let kind = [widget.string("app"), widget.string("kind")].compactMap { $0 }.joined(separator: " / ")
        lines.append(style.bold("\(place) \(instance)") + (kind.isEmpty ? "" : " (\(kind))"))
        let reason = widget.string("reason") ?? "?"
        lines.append(row("Reason", style.accent(reason) + " — " + ReasonText.describe(reason)))

        let score = widget.double("score") ?? 0
        let behaviour = widget.double("behaviour") ?? 0
        let relevance = widget.double("relevance") ?? 0
        lines.append(
            row(
                "Score",
                "\(Format.number(score)) = behaviour \(Format.number(behaviour)) (chance the user goes to it next)"
                    + " + relevance \(Format.number(relevance))"))
        lines += signalRows(widget.object("contributions"), style: style)
        lines.append(row("Relevance", relevanceText(widget, reference: reference, style: style)))
        if let index = widget.int("relevantContext") {
            lines.append(row("", "relevant context #\(index + 1) of the provider's list is in force"))
        }
        if let group = widget.string("relevanceGroup") {
            let suppressed = widget.bool("suppressedByGroup") == true
            lines.append(
                row(
                    "",
                    "relevance group \(group)"
                        + (suppressed
                            ? style.warn(
                                ": another widget of the group is surfaced, so its relevance does not count now") : ""))
            )
        }
        lines.append(
            row("Stability", stabilityText(widget, reference: reference, developerMode: developerMode, style: style)))
        if let until = widget.time("manualSwipeUntil"), until > reference {
            lines.append(
                row(
                    "",
                    "the user swiped to it: it keeps the top until "
                        + Format.timeAndRelative(until, reference: reference)))
        }
        if widget.bool("rotationLimited") == true {
            let limit: String
            switch widget.string("rotationLimitedBy") {
            case "dailyLimit": limit = "its daily limit of rotations"
            case "manualSwipe": limit = "the manual swipe's grace period"
            case "minimumTimeOnTop": limit = "the minimum time on top"
            default: limit = "a stability limit"
            }
            var text = "\(limit) withheld its rotation to the top"
            if let next = widget.time("nextRotationAllowed"), next > reference {
                text += "; it may rotate up " + Format.timeAndRelative(next, reference: reference)
            }
            lines.append(row("", style.warn(text)))
        } else if widget.string("reason") != "pinned", let next = widget.time("nextRotationAllowed"), next > reference,
            (widget.int("rotationsLeftToday") ?? 1) == 0
        {
            lines.append(
                row(
                    "",
                    "its daily rotations are used: it may rotate up "
                        + Format.timeAndRelative(next, reference: reference)))
        }
        if let engagement = widget.object("engagement"), let factor = engagement.double("factor"), factor != 1 {
            var parts: [String] = []
            if let taps = engagement.double("taps"), taps >= 0.01 {
                parts.append("taps \(Format.number(taps, decimals: 2))")
            }
            if let ignored = engagement.double("ignoredImpressions"), ignored >= 0.01 {
                parts.append("impressions without a tap \(Format.number(ignored, decimals: 2))")
            }
            if let until = engagement.time("demotedUntil") {
                parts.append(
                    style.warn("swiped away: demoted until " + Format.timeAndRelative(until, reference: reference)))
            }
            parts.append("behaviour ×\(Format.number(factor, decimals: 2))")
            lines.append(row("Engagement", parts.joined(separator: " · ")))
        }
        lines.append(row("Budget", budgetText(widget.object("budget"), reference: reference, style: style)))
        if let next = widget.time("nextReload") {
            lines.append(row("", "next reload " + Format.timeAndRelative(next, reference: reference)))
        }
        lines.append(
            row("Pinned", widget.bool("pinned") == true ? style.accent("yes, kept on top by the shell") : "no"))
        return lines
    }

    /// One line per signal, largest first, with a bar: the shares of the widget's log-odds against the stack's
    /// average widget (relevance is added to the score directly).
    static func signalRows(_ contributions: JSONObject?, style: Style) -> [String] {
        let all = (contributions ?? [:]).compactMap { key, value in value.doubleValue.map { (key, $0) } }
        // Signals that round to 0.00 are left out, as the interface leaves out those that contributed nothing.
        let pairs = all.filter { abs($0.1) >= 0.005 }
            .sorted { abs($0.1) != abs($1.1) ? abs($0.1) > abs($1.1) : $0.0 < $1.0 }
        guard !pairs.isEmpty else { return [row("Signals", style.dim("none contributed"))] }
        let largest = max(pairs.map { abs($0.1) }.max() ?? 1, 1e-9)
        let nameWidth = pairs.map(\.0.count).max() ?? 0
        var lines: [String] = []
        for (index, (name, value)) in pairs.enumerated() {
            let bar = Format.bar(abs(value) / largest, width: 20)
            let coloured = value >= 0 ? style.good(bar) : style.apply(bar, .red)
            let label = name + String(repeating: " ", count: nameWidth - name.count)
            let number = Format.signed(value)
            let padded = String(repeating: " ", count: max(0, 6 - number.count)) + number
            var line = row(index == 0 ? "Signals" : "", "\(label)  \(padded)  \(coloured)")
            while line.hasSuffix(" ") { line.removeLast() }
            lines.append(line)
        }
        lines.append(row("", style.dim("(signals: share of its log-odds against the stack's average widget)")))
        return lines
    }

    static func relevanceText(_ widget: JSONObject, reference: Timestamp, style: Style) -> String {
        guard let state = widget.object("relevanceState") else { return "unknown" }
        let status = state.string("status") ?? "none"
        var parts: [String] = []
        switch status {
        case "relevant":
            parts.append(
                style.good("relevant") + ": score \(Format.number(state.double("score") ?? 0, decimals: 3))"
                    + ", normalised \(Format.number(state.double("normalized") ?? 0, decimals: 2))")
        case "notRelevant": parts.append("not relevant (score 0 or less in force)")
        case "expired": parts.append(style.dim("expired") + ": the relevance in force ran out")
        default: parts.append("none: no timeline relevance in force")
        }
        if let since = state.time("since") { parts.append("since " + Format.time(since, reference: reference)) }
        if let expires = state.time("expires") {
            parts.append(
                (expires > reference ? "expires " : "expired ") + Format.timeAndRelative(expires, reference: reference))
        }
        if let current = state.time("currentEntryDate") {
            parts.append("current entry " + Format.time(current, reference: reference))
        }
        return parts.joined(separator: ", ")
    }

    static func stabilityText(_ widget: JSONObject, reference: Timestamp, developerMode: Bool, style: Style) -> String {
        var parts: [String] = []
        if let onTop = widget.double("timeOnTop") {
            parts.append("on top for " + Format.duration(onTop))
        } else {
            parts.append("not on top")
        }
        let used = widget.int("rotationsToday") ?? 0
        let left = widget.int("rotationsLeftToday") ?? 0
        let leftText = "\(left) left"
        parts.append(
            "rotations in the last 24h: \(used), "
                + (developerMode
                    ? leftText + " (not enforced: developer mode)" : left == 0 ? style.warn(leftText) : leftText))
        return parts.joined(separator: " · ")
    }

    /// `68 of 70 reloads left (2 used in 24h) · next reload possible now`.
    /// `now`: the word for the time the budget is for ("then" for a budget asked about another time).
    public static func budgetText(_ budget: JSONObject?, reference: Timestamp?, style: Style, now: String = "now")
        -> String
    {
        guard let budget else { return "unknown" }
        let capacity = budget.int("capacity") ?? 0
        let used = budget.int("used") ?? 0
        let left = budget.int("left") ?? 0
        var text = "\(left) of \(capacity) reloads left (\(used) used in the last 24h)"
        if left == 0 { text = style.warn(text) }
        if let next = budget.time("nextAvailable") {
            if let reference, next > reference {
                text += " · next reload possible " + Format.timeAndRelative(next, reference: reference)
            } else if left > 0 {
                text += " · a reload is possible \(now)"
            } else {
                text += " · next reload possible " + Format.time(next)
            }
        } else {
            text += " · " + style.warn("no reload possible")
        }
        return text
    }
}
