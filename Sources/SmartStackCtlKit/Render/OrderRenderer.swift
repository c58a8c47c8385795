public import SmartStackProtocol

/// A stack's order (a `GetStack` or `Subscribe` reply) as a table, with the stack's settings when known.
public enum OrderRenderer {
    /// The order table; `configuration` is the stack's `ListStacks` entry, when the caller has it.
    public static func render(_ reply: JSONObject, configuration: JSONObject? = nil, style: Style = .plain) -> String {
        let stack = reply.string("stack") ?? "?"
        var heading = style.bold(stack) + " · revision \(reply.int("revision").map(String.init) ?? "?")"
        if let date = reply.time("date") { heading += " · " + Format.time(date) }
        var lines = [heading]
        if let configuration { lines.append(settingsLine(configuration, style: style)) }
        let entries = reply.objects("order")
        guard !entries.isEmpty else { return (lines + ["(no widgets)"]).joined(separator: "\n") }
        var table = Table([
            .init("#", .right), .init("widget"), .init("app/kind"), .init("score", .right), .init("reason"),
            .init("flags"), .init("top signals"),
        ])
        for entry in entries {
            var flags: [String] = []
            if entry.bool("pinned") == true { flags.append(style.accent("pinned")) }
            if entry.bool("suggested") == true { flags.append(style.accent("suggested")) }
            if let state = entry.object("liveActivity")?.string("state") { flags.append(style.accent(state)) }
            let kind = [entry.string("app"), entry.string("kind")].compactMap { $0 }.joined(separator: "/")
            let position = entry.int("position").map { String($0 + 1) } ?? ""
            table.append([
                position, position == "1" ? style.bold(entry.string("instance") ?? "") : entry.string("instance") ?? "",
                kind, entry.double("score").map { Format.number($0) } ?? "", entry.string("reason") ?? "",
                flags.joined(separator: ","), topSignals(entry.object("contributions")),
            ])
        }
        lines.append(table.render(style: style))
        lines += LiveActivityRenderer.render(entries, reference: reply.time("date"), style: style)
        return lines.joined(separator: "\n")
    }

    /// `family systemMedium · Smart Rotate on · suggestions on · pinned mail · developer mode`.
    static func settingsLine(_ stack: JSONObject, style: Style) -> String {
        var parts: [String] = []
        if let family = stack.string("family") { parts.append("family \(family)") }
        parts.append("Smart Rotate " + (stack.bool("smartRotate") == false ? "off" : "on"))
        parts.append("suggestions " + (stack.bool("suggestions") == false ? "off" : "on"))
        if stack.bool("liveActivities") == false { parts.append("no Live Activities") }
        if let pinned = stack.string("pinned") { parts.append("pinned \(pinned)") }
        if stack.bool("developerMode") == true { parts.append(style.warn("developer mode")) }
        return parts.joined(separator: " · ")
    }

    /// The three largest contributions by magnitude: `recency +1.33 frequency -0.20`.
    public static func topSignals(_ contributions: JSONObject?, count: Int = 3) -> String {
        guard let contributions else { return "" }
        let pairs = contributions.compactMap { key, value in value.doubleValue.map { (key, $0) } }
            .sorted { abs($0.1) != abs($1.1) ? abs($0.1) > abs($1.1) : $0.0 < $1.0 }
        return pairs.prefix(count).map { "\($0.0) \(Format.signed($0.1))" }.joined(separator: " ")
    }
}

/// `ListStacks` as a table.
public enum StacksRenderer {
    public static func render(_ reply: JSONObject, style: Style = .plain) -> String {
        let stacks = reply.objects("stacks")
        guard !stacks.isEmpty else { return "(no stacks)" }
        var table = Table([
            .init("stack"), .init("family"), .init("widgets", .right), .init("rotate"), .init("suggest"),
            .init("pinned"), .init("revision", .right), .init("top"),
        ])
        for stack in stacks {
            table.append([
                stack.string("stack") ?? "", stack.string("family") ?? "", String(stack.objects("widgets").count),
                stack.bool("smartRotate") == false ? "off" : "on", stack.bool("suggestions") == false ? "off" : "on",
                stack.string("pinned") ?? "-", stack.int("revision").map(String.init) ?? "-",
                stack.string("top").map { style.bold($0) } ?? "-",
            ])
        }
        return table.render(style: style) + "\n\n\(stacks.count) stack\(stacks.count == 1 ? "" : "s") listed."
    }
}
