public import SmartStackCore

extension Decision {
    /// The shape of `GetStack` and `Subscribe` replies: `{stack, revision, order, date}`.
    public var wireObject: JSONObject {
        var order: [JSONValue] = []
        order.reserveCapacity(entries.count)
        for entry in entries { order.append(.object(entry.wireObject)) }
        return [
            "stack": .string(stack.rawValue), "revision": .int(Int64(revision)), "order": .array(order),
            "date": time.wireValue,
        ]
    }
}

extension DecisionEntry {
    /// `{instance, position, score, suggested, pinned, reason, contributions, app?, kind?}`.
    public var wireObject: JSONObject {
        var object = JSONObject(minimumCapacity: 9)
        object["instance"] = .string(instance)
        object["position"] = .int(Int64(position))
        object["score"] = .double(score)
        object["suggested"] = .bool(suggested)
        object["pinned"] = .bool(pinned)
        object["reason"] = .string(reason.rawValue)
        object["contributions"] = .object(contributions.wireObject)
        if let kind {
            object["app"] = .string(kind.app.rawValue)
            object["kind"] = .string(kind.kind)
        } else if let app = Self.liveActivityApp(instance) {
            object["app"] = .string(app)
        }
        return object
    }

    /// The app of a Live Activity entry's id, `liveActivity:<app>/<id>`.
    private static func liveActivityApp(_ instance: String) -> String? {
        let prefix = "liveActivity:"
        guard instance.hasPrefix(prefix) else { return nil }
        let rest = instance.dropFirst(prefix.count)
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        return String(rest[..<slash])
    }
}

extension SignalShares {
    /// Each contributing signal's share by its name (`recency`, `relevance`, …); zero shares are left out.
    public var wireObject: JSONObject {
        var object = JSONObject(minimumCapacity: Signal.allCases.count)
        for signal in Signal.allCases {
            if let share = self[signal] { object[signal.rawValue] = .double(share) }
        }
        return object
    }
}
