public import SmartStackCore
public import SmartStackProtocol

/// The Live Activity entries of an order (`GetStack`, `Subscribe`, `Explain`), one block each: what a shell
/// draws (state, attributes, content state) and its dates.
public enum LiveActivityRenderer {
    /// One block per entry that carries a `liveActivity`; empty when there is none.
    public static func render(_ order: [JSONObject], reference: Timestamp?, style: Style = .plain) -> [String] {
        var lines: [String] = []
        for entry in order {
            guard let activity = entry.object("liveActivity") else { continue }
            let position = entry.int("position").map { "\($0 + 1). " } ?? ""
            let name = "\(activity.string("app") ?? "?")/\(activity.string("id") ?? "?")"
            let state = activity.string("state") ?? "?"
            lines.append("")
            lines.append(
                style.bold("\(position)Live Activity \(name)") + " · "
                    + (state == "active" ? style.good(state) : style.warn(state)))
            lines.append(row("Attributes", pairs(activity.object("attributes"))))
            lines.append(row("Content", pairs(activity.object("contentState"))))
            let ends = state == "active" ? "ends" : "ended"
            var dates: [String] = []
            for (label, key) in [
                ("started", "started"), ("updated", "updated"), (ends, "ends"), ("removed", "removed"),
            ] {
                guard let time = activity.time(key) else { continue }
                dates.append(
                    "\(label) " + (reference.map { Format.timeAndRelative(time, reference: $0) } ?? Format.time(time)))
            }
            lines.append(row("Dates", dates.joined(separator: " · ")))
        }
        return lines
    }

    /// `name=value, …` in key order, or `(none)`.
    static func pairs(_ object: JSONObject?) -> String {
        guard let object, !object.isEmpty else { return "(none)" }
        return object.map { ($0.key, $0.value.stringValue ?? "") }.sorted { $0.0 < $1.0 }
            .map { "\($0.0)=\($0.1)" }.joined(separator: ", ")
    }

    /// `   Label        text`, aligned as explain's widget blocks.
    private static func row(_ label: String, _ text: String) -> String {
        "   " + label + String(repeating: " ", count: max(1, 12 - label.count)) + text
    }
}
