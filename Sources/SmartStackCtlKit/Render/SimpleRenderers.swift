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

/// `GetStatistics`.
public enum StatisticsRenderer {
    public static func render(_ reply: JSONObject, style: Style = .plain) -> String {
        var pairs: [(String, String)] = []
        let names: [(String, String)] = [
            ("stacks", "Stacks"), ("widgets", "Widgets"), ("kinds", "Kinds"), ("donations", "Donations"),
            ("liveActivities", "Live Activities"), ("subscribers", "Subscribers"),
            ("reloadWatchers", "Reload watchers"),
            ("connections", "Connections"), ("calls", "Calls"), ("logLevel", "Log level"),
        ]
        for (key, label) in names {
            guard let value = reply[key], !value.isNull else { continue }
            pairs.append((label, value.intValue.map { Format.count(Int($0)) } ?? value.cellText))
        }
        if let uptime = reply.double("uptimeSeconds") { pairs.append(("Uptime", Format.duration(uptime))) }
        let known = Set(names.map(\.0) + ["uptimeSeconds"])
        for (key, value) in reply where !known.contains(key) && !value.isNull { pairs.append((key, value.cellText)) }
        return KeyValueRenderer.render(pairs, style: style)
    }
}

/// `GetBudget`.
public enum BudgetRenderer {
    public static func render(_ reply: JSONObject, instance: String, style: Style = .plain) -> String {
        style.bold(instance) + ": " + ExplainRenderer.budgetText(reply, reference: nil, style: style)
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
