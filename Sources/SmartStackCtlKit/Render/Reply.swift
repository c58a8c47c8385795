public import SmartStackCore
public import SmartStackProtocol

/// Typed reads of a reply's members, lenient about what is missing: renderers print what is there.
extension JSONObject {
    /// A string member.
    public func string(_ key: String) -> String? { self[key]?.stringValue }
    /// A number member.
    public func double(_ key: String) -> Double? { self[key]?.doubleValue }
    /// An integer member.
    public func int(_ key: String) -> Int? { self[key]?.intValue.map { Int($0) } }
    /// A boolean member.
    public func bool(_ key: String) -> Bool? { self[key]?.boolValue }
    /// An object member.
    public func object(_ key: String) -> JSONObject? { self[key]?.objectValue }
    /// The objects of an array member.
    public func objects(_ key: String) -> [JSONObject] { self[key]?.arrayValue?.compactMap(\.objectValue) ?? [] }
    /// An RFC 3339 member as a timestamp.
    public func time(_ key: String) -> Timestamp? { string(key).flatMap { try? Timestamp(rfc3339: $0) } }
}

extension JSONValue {
    /// A value as a table cell: strings bare, `-` for null, `yes`/`no`, numbers to three decimals.
    public var cellText: String {
        switch self {
        case .null: "-"
        case .bool(let flag): flag ? "yes" : "no"
        case .int(let number): String(number)
        case .double(let number): Format.number(number)
        case .string(let text): text
        case .array(let values): values.map(\.cellText).joined(separator: ",")
        case .object: String(decoding: JSON.serialize(self), as: UTF8.self)
        }
    }
}

/// What each reason code means, in a few words.
public enum ReasonText {
    public static func describe(_ reason: String) -> String {
        switch reason {
        case "relevance": "surfaced by the provider's timeline relevance or a relevant context"
        case "behaviour":
            "placed by what the user does with the apps (recency, frequency, time, sequence, context, what the user "
                + "opened after looking at the stack)"
        case "engagement":
            "placed mostly by the user's taps and swipes to this widget (with what the user opened after looking)"
        case "pinned": "pinned on top by the shell"
        case "userOrder": "Smart Rotate is off: the user's own order"
        case "manualSwipe": "the user swiped to it; it keeps the top for the grace period"
        case "suggestion": "inserted temporarily by Widget Suggestions"
        case "liveActivity": "a Live Activity of one of the stack's apps"
        case "rotationLimited":
            "relevance would have rotated it up, but a stability limit (minimum time on top, a manual swipe's grace "
                + "period or its daily limit) withheld the rotation"
        case "notRelevant": "its timeline says it is not relevant now"
        case "expired": "its relevance duration ended"
        default: reason
        }
    }
}
