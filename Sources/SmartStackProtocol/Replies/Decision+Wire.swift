public import SmartStackCore

extension Decision {
    /// The shape of `GetStack` and `Subscribe` replies: `{stack, revision, order, date}`, and `removed: true` for a
    /// removed stack's last `Subscribe` reply.
    public var wireObject: JSONObject {
        var order: [JSONValue] = []
        order.reserveCapacity(entries.count)
        for entry in entries { order.append(.object(entry.wireObject)) }
        var object = JSONObject(minimumCapacity: 4)
        object.appendNew("stack", .string(stack.rawValue))
        object.appendNew("revision", .int(Int64(revision)))
        object.appendNew("order", .array(order))
        object.appendNew("date", time.wireValue)
        if removed { object.appendNew("removed", .bool(true)) }
        return object
    }

    /// Appends exactly `JSON.serialize(wireObject)`, written directly (several times faster): encode a published
    /// decision once and send the bytes to every subscriber with `VarlinkReply.encode(serializedParameters:…)`.
    public func encodeWireObject(into buffer: inout [UInt8]) {
        var bound = 64 + JSONWriter.bound(stack.rawValue) + Timestamp.wireBound
        for entry in entries { bound += entry.wireBound }
        JSONWriter.withOutput(bound: bound, into: &buffer) { output in
            output.literal(#"{"stack":"#)
            output.writeString(stack.rawValue)
            output.literal(#","revision":"#)
            output.write(Int64(revision))
            output.literal(#","order":["#)
            var first = true
            for entry in entries {
                if !first { output.byte(Byte.comma) }
                first = false
                entry.encode(into: &output)
            }
            output.literal(#"],"date":"#)
            time.writeWire(to: &output)
            if removed { output.literal(#","removed":true"#) }
            output.byte(Byte.closeBrace)
        }
    }
}

extension DecisionEntry {
    /// `{instance, position, score, suggested, pinned, reason, contributions, app?, kind?, configuration?,
    /// liveActivity?}`; `configuration` only for a suggestion.
    public var wireObject: JSONObject {
        var object = JSONObject(minimumCapacity: 11)
        object.appendNew("instance", .string(instance))
        object.appendNew("position", .int(Int64(position)))
        object.appendNew("score", .double(score))
        object.appendNew("suggested", .bool(suggested))
        object.appendNew("pinned", .bool(pinned))
        object.appendNew("reason", .string(reason.rawValue))
        object.appendNew("contributions", .object(contributions.wireObject))
        if let app = app {
            object.appendNew("app", .string(app))
            if let kind { object.appendNew("kind", .string(kind.kind)) }
        }
        if let configuration = suggestedConfiguration {
            var values = JSONObject(minimumCapacity: configuration.count)
            for (name, value) in configuration { values.appendNew(name, .string(value)) }
            object.appendNew("configuration", .object(values))
        }
        if let liveActivity { object.appendNew("liveActivity", .object(liveActivity.wireObject)) }
        return object
    }

    /// A suggestion's configuration, read back from its id (`suggestion:<app>/<kind>[?name=value&…]`, written by
    /// `Configuration.queryText`): each value in its text form, as `ConfigureStack` and `ChangeStack` take it, so a
    /// shell can place the suggested widget as it is. In the id's order (sorted by name); nil for any other entry.
    public var suggestedConfiguration: [(name: String, value: String)]? {
        guard suggested, let kind else { return nil }
        let prefix = "suggestion:\(kind.app.rawValue)/\(kind.kind)"
        guard instance.hasPrefix(prefix) else { return nil }
        let query = instance.utf8.dropFirst(prefix.utf8.count)
        guard let mark = query.first else { return [] }
        guard mark == UInt8(ascii: "?") else { return nil }
        return query.dropFirst().split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false).map { pair in
            guard let equals = pair.firstIndex(of: UInt8(ascii: "=")) else { return (Self.unescaped(pair), "") }
            return (Self.unescaped(pair[..<equals]), Self.unescaped(pair[pair.index(after: equals)...]))
        }
    }

    /// `text` with every `%XX` turned back into its byte (what `Configuration.queryText` escaped).
    private static func unescaped(_ text: Substring.UTF8View.SubSequence) -> String {
        guard text.contains(UInt8(ascii: "%")) else { return String(decoding: text, as: UTF8.self) }
        func digit(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count)
        var index = text.startIndex
        while index != text.endIndex {
            let byte = text[index]
            let first = text.index(after: index)
            if byte == UInt8(ascii: "%"), first != text.endIndex, text.index(after: first) != text.endIndex,
                let high = digit(text[first]), let low = digit(text[text.index(after: first)])
            {
                bytes.append(high << 4 | low)
                index = text.index(first, offsetBy: 2)
            } else {
                bytes.append(byte)
                index = first
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The app of the entry's kind, or of a Live Activity entry (`liveActivity:<app>/<id>`).
    private var app: String? {
        if let kind { return kind.app.rawValue }
        let prefix = "liveActivity:"
        guard instance.hasPrefix(prefix) else { return nil }
        let rest = instance.dropFirst(prefix.count)
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        return String(rest[..<slash])
    }

    /// The most bytes `encode(into:)` writes: fixed keys and values, the strings, every signal's share.
    var wireBound: Int {
        let strings =
            JSONWriter.bound(instance)
            + (kind.map { JSONWriter.bound($0.app.rawValue) + JSONWriter.bound($0.kind) } ?? JSONWriter.bound(instance))
        // A suggestion's configuration: its names and values, each at most as long as in the id, and their keys.
        let configuration = suggested ? 24 + 2 * JSONWriter.bound(instance) : 0
        let activity = liveActivity.map { 16 + JSONWriter.bound($0.wireObject) } ?? 0
        return 200 + strings + configuration + SignalShares.wireBound + activity
    }

    func encode(into output: inout RawOutput) {
        output.literal(#"{"instance":"#)
        output.writeString(instance)
        output.literal(#","position":"#)
        output.write(Int64(position))
        output.literal(#","score":"#)
        output.write(score)
        output.literal(suggested ? #","suggested":true"# : #","suggested":false"#)
        output.literal(pinned ? #","pinned":true"# : #","pinned":false"#)
        output.literal(#","reason":"#)
        output.writeString(reason.rawValue)
        output.literal(#","contributions":"#)
        contributions.encode(into: &output)
        if let app {
            output.literal(#","app":"#)
            output.writeString(app)
            if let kind {
                output.literal(#","kind":"#)
                output.writeString(kind.kind)
            }
        }
        if let configuration = suggestedConfiguration {
            output.literal(#","configuration":{"#)
            var first = true
            for (name, value) in configuration {
                if !first { output.byte(Byte.comma) }
                first = false
                output.writeString(name)
                output.byte(Byte.colon)
                output.writeString(value)
            }
            output.byte(Byte.closeBrace)
        }
        if let liveActivity {
            output.literal(#","liveActivity":"#)
            output.write(liveActivity.wireObject)
        }
        output.byte(Byte.closeBrace)
    }
}

extension LiveActivityEntry {
    /// `{app, id, state, attributes, contentState, started, updated, ends, removed}`: what a shell draws.
    public var wireObject: JSONObject {
        var object = JSONObject(minimumCapacity: 9)
        object.appendNew("app", .string(activity.app.rawValue))
        object.appendNew("id", .string(activity.id))
        object.appendNew("state", .string(state.rawValue))
        object.appendNew("attributes", .object(Self.strings(activity.attributes)))
        object.appendNew("contentState", .object(Self.strings(activity.contentState)))
        object.appendNew("started", activity.started.wireValue)
        object.appendNew("updated", activity.updated.wireValue)
        object.appendNew("ends", activity.endDate.wireValue)
        object.appendNew("removed", activity.removalDate.wireValue)
        return object
    }

    /// Keys in sorted order, so the same activity always serialises to the same bytes.
    private static func strings(_ values: [String: String]) -> JSONObject {
        var object = JSONObject(minimumCapacity: values.count)
        for key in values.keys.sorted() { object.appendNew(key, .string(values[key] ?? "")) }
        return object
    }
}

extension SignalShares {
    /// Each contributing signal's share by its name (`recency`, `relevance`, …); zero shares are left out.
    public var wireObject: JSONObject {
        var object = JSONObject(minimumCapacity: Self.signals.count)
        for signal in Self.signals {
            if let share = self[signal] { object.appendNew(signal.rawValue, .double(share)) }
        }
        return object
    }

    /// `Signal.allCases` builds a new array on every call.
    private static let signals = Signal.allCases

    /// Braces, and for every signal its quoted name (at most 16 bytes), a colon, a comma and a number.
    static let wireBound = 2 + signals.count * (20 + JSONWriter.doubleBound)

    func encode(into output: inout RawOutput) {
        output.byte(Byte.openBrace)
        var first = true
        for signal in Self.signals {
            guard let share = self[signal] else { continue }
            if !first { output.byte(Byte.comma) }
            first = false
            output.writeString(signal.rawValue)
            output.byte(Byte.colon)
            output.write(share)
        }
        output.byte(Byte.closeBrace)
    }
}
