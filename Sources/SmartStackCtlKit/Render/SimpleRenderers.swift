public import SmartStackCore
public import SmartStackProtocol

/// Replies that are a few named values: aligned `name: value` lines.
public enum KeyValueRenderer {
    public static func render(_ pairs: [(String, String)], style: Style = .plain) -> String {
        let width = pairs.map(\.0.count).max() ?? 0
        return pairs.map { name, value in
            String(repeating: " ", count: width - name.count) + style.bold(name) + ": " + value
        }.joined(separator: "\n")
    }
}

/// `GetStatistics` as one table of labelled values in three groups (the engine, the service, storage), every
/// value readable: counts with separators, bytes and durations with units, commit latency as percentiles.
public enum StatisticsRenderer {
    public static func render(_ reply: JSONObject, style: Style = .plain) -> String {
        var rows: [(String, String)] = []
        func count(_ key: String, _ label: String) {
            guard let value = reply[key], !value.isNull else { return }
            rows.append((label, value.intValue.map { Format.count(Int($0)) } ?? value.cellText))
        }
        for (key, label) in [
            ("stacks", "Stacks"), ("widgets", "Widgets"), ("kinds", "Kinds"), ("donations", "Donations"),
            ("liveActivities", "Live Activities"),
        ] { count(key, label) }
        if let apps = reply["topApps"]?.arrayValue, !apps.isEmpty {
            let parts = apps.compactMap(\.objectValue).compactMap { app -> String? in
                guard let id = app.string("app"), let donations = app.int("donations") else { return nil }
                return "\(id) \(Format.count(donations))"
            }
            rows.append(("Most donations", parts.joined(separator: ", ")))
        }
        for (key, label) in [
            ("connections", "Connections"), ("subscribers", "Subscribers"), ("reloadWatchers", "Reload watchers"),
            ("calls", "Calls received"), ("connectionsRefused", "Connections refused"),
            ("connectionsClosedForInput", "Closed for input"),
        ] { count(key, label) }
        if let bytes = reply.int("inputBytes") { rows.append(("Unanswered input", Self.bytes(bytes))) }
        if let uptime = reply.double("uptimeSeconds") { rows.append(("Uptime", Format.duration(uptime))) }
        if let level = reply.string("logLevel") { rows.append(("Log level", level)) }
        count("journalEntriesDropped", "Journal entries dropped")
        count("storedEvents", "Stored events")
        count("storedDonations", "Stored donations")
        if let bytes = reply.int("databaseBytes") { rows.append(("Database size", Self.bytes(bytes))) }
        if reply["lastSnapshot"] != nil || reply["storedEvents"] != nil {
            rows.append(("Last snapshot", reply.time("lastSnapshot").map { Format.time($0) } ?? "none yet"))
        }
        count("commits", "Commits")
        if let latency = reply.object("commitLatency") {
            let parts = ["p50", "p90", "p99", "max"].compactMap { key in
                latency.double(key).map { "\(key) \(Format.number($0, decimals: 2)) ms" }
            }
            let samples = latency.int("samples").map { " (\(Format.count($0)) calls)" } ?? ""
            rows.append(("Commit latency", parts.joined(separator: ", ") + samples))
        }
        let known: Set<String> = [
            "stacks", "widgets", "kinds", "donations", "topApps", "liveActivities", "connections", "subscribers",
            "reloadWatchers", "calls", "connectionsRefused", "connectionsClosedForInput", "inputBytes",
            "uptimeSeconds", "logLevel", "journalEntriesDropped", "storedEvents", "storedDonations", "databaseBytes",
            "lastSnapshot", "commits", "commitLatency",
        ]
        for (key, value) in reply where !known.contains(key) && !value.isNull { rows.append((key, value.cellText)) }
        return KeyValueRenderer.render(rows, style: style)
    }

    /// `1,234 B`, `12.3 KiB`, `4.5 MiB`, `1.2 GiB`.
    static func bytes(_ value: Int) -> String {
        let units = ["KiB", "MiB", "GiB", "TiB"]
        guard value >= 1_024 else { return "\(value) B" }
        var amount = Double(value) / 1_024
        var unit = 0
        while amount >= 1_024, unit < units.count - 1 {
            amount /= 1_024
            unit += 1
        }
        return "\(Format.number(amount, decimals: 1)) \(units[unit])"
    }
}

/// `GetBudget`.
public enum BudgetRenderer {
    /// `at`: the time asked about (`--at`), when not now.
    public static func render(_ reply: JSONObject, instance: String, at: Timestamp? = nil, style: Style = .plain)
        -> String
    {
        style.bold(instance) + ": "
            + ExplainRenderer.budgetText(reply, reference: at, style: style, now: at == nil ? "now" : "then")
    }
}

/// `ListDonations` pages.
public enum DonationsRenderer {
    public static func render(_ donations: [JSONObject], style: Style = .plain) -> String {
        guard !donations.isEmpty else { return "(no donations)" }
        var table = Table(headers: ["id", "intent", "date", "group", "parameters"])
        for donation in donations {
            let parameters = (donation.object("parameters") ?? [:]).map { "\($0.key)=\($0.value.cellText)" }
            table.append([
                donation.string("id") ?? "", donation.string("intent") ?? "", donation.string("date") ?? "",
                donation.string("groupId") ?? "-", parameters.joined(separator: " "),
            ])
        }
        return table.render(style: style) + "\n\n\(donations.count) donation\(donations.count == 1 ? "" : "s") listed."
    }
}

/// One `WatchReloads` reply as a line.
public enum ReloadRenderer {
    public static func render(_ reply: JSONObject, style: Style = .plain) -> String {
        var text = (reply.string("date") ?? "?") + "  " + style.bold(reply.string("instance") ?? "?")
        text += "  \(reply.string("app") ?? "?")/\(reply.string("kind") ?? "?")  \(reply.string("reason") ?? "?")"
        if let until = reply.string("withheldUntil") { text += "  " + style.warn("withheld until \(until)") }
        if let configuration = reply.object("configuration"), !configuration.isEmpty {
            text += "  " + configuration.map { "\($0.key)=\($0.value.cellText)" }.joined(separator: " ")
        }
        return text
    }
}

/// `org.varlink.service.GetInfo`.
public enum InfoRenderer {
    public static func render(_ reply: JSONObject, address: String, style: Style = .plain) -> String {
        var pairs: [(String, String)] = [("Address", address)]
        for (key, label) in [("vendor", "Vendor"), ("product", "Product"), ("version", "Version"), ("url", "URL")] {
            if let value = reply.string(key) { pairs.append((label, value)) }
        }
        let interfaces = reply["interfaces"]?.arrayValue?.compactMap(\.stringValue) ?? []
        pairs.append(("Interfaces", interfaces.joined(separator: "\n" + String(repeating: " ", count: 12))))
        return KeyValueRenderer.render(pairs, style: style)
    }
}
