/// A typed value of a configuration parameter.
///
/// Two values are equal when they have the same type and the same `matchKey`: an entity's display
/// name and a date's UTC offset do not count, so they never make two configurations different.
public enum ConfigurationValue: Sendable, Hashable, CustomStringConvertible {
    /// Free text, at most 4096 bytes.
    case string(String)
    /// A boolean.
    case bool(Bool)
    /// A signed 64-bit integer.
    case int(Int64)
    /// A finite number.
    case decimal(Double)
    /// The id of one of an enum parameter's cases.
    case enumCase(String)
    /// An entity: its id and, when known, its display name.
    case entity(id: String, displayName: String?)
    /// A point in time.
    case date(Timestamp)
    /// A finite, non-negative number of seconds.
    case duration(seconds: Double)
    /// A URL with a scheme and no whitespace.
    case url(String)
    /// A finite number with a non-empty unit, such as `12.5 km`.
    case measurement(value: Double, unit: String)
    /// A finite amount with a three-letter upper-case ISO 4217 code.
    case currency(amount: Double, code: String)

    /// The longest text a value, entity id or display name may have, in UTF-8 bytes.
    public static let maximumTextBytes = 4096

    /// The value's parameter type.
    public var type: ParameterType {
        switch self {
        case .string: .string
        case .bool: .bool
        case .int: .int
        case .decimal: .decimal
        case .enumCase: .enumeration
        case .entity: .entity
        case .date: .date
        case .duration: .duration
        case .url: .url
        case .measurement: .measurement
        case .currency: .currency
        }
    }

    /// The canonical text compared with donated intent parameters.
    ///
    /// `string` and `url`: the text; `bool`: `true`/`false`; `int`: decimal digits; `decimal`: the
    /// shortest text that reads back as the same number (`2.5`, `3.0`, `1e+20`; `-0` as `0.0`);
    /// `enumCase`: the case id; `entity`: the entity id; `date`: RFC 3339 in UTC with milliseconds
    /// (and microseconds when there are any); `duration`: seconds as a decimal; `measurement`:
    /// `VALUE UNIT`; `currency`: `AMOUNT CODE`. Parsing a `matchKey` gives back an equal value.
    public var matchKey: String {
        switch self {
        case .string(let text), .url(let text), .enumCase(let text): text
        case .bool(let value): value ? "true" : "false"
        case .int(let value): String(value)
        case .decimal(let value): Self.decimalText(value)
        case .entity(let id, _): id
        case .date(let timestamp): Self.utcText(timestamp)
        case .duration(let seconds): Self.decimalText(seconds)
        case .measurement(let value, let unit): "\(Self.decimalText(value)) \(unit)"
        case .currency(let amount, let code): "\(Self.decimalText(amount)) \(code)"
        }
    }

    public var description: String { "\(type):\(matchKey)" }

    public static func == (lhs: ConfigurationValue, rhs: ConfigurationValue) -> Bool {
        lhs.type == rhs.type && lhs.matchKey == rhs.matchKey
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(type)
        hasher.combine(matchKey)
    }

    private static func decimalText(_ value: Double) -> String { value == 0 ? "0.0" : "\(value)" }

    /// `rfc3339` in UTC: milliseconds, and microseconds when there are any.
    private static func utcText(_ timestamp: Timestamp) -> String { timestamp.withOffset(0).rfc3339 }
}

extension ConfigurationValue {
    /// Parses donated or wire text into a value of `schema`'s type; a failure names `parameter`.
    ///
    /// Accepted text: `string` any (≤ 4096 bytes); `bool` `true` or `false`; `int` a 64-bit decimal
    /// integer; `decimal` a finite number (`-1.5`, `2e3`; no hex, `inf` or `nan`); `enum` a case id;
    /// `entity` a non-empty id (the display name is taken from the suggested entities or default);
    /// `date` RFC 3339 with an offset; `duration` non-negative seconds; `url` a scheme
    /// (`[A-Za-z][A-Za-z0-9+.-]*:`) and no whitespace; `measurement` `VALUE UNIT`; `currency`
    /// `AMOUNT CODE` with a three-letter upper-case code. Nothing is trimmed.
    public static func parse(
        _ text: String, as schema: ParameterSchema, parameter: String
    ) throws(CoreError) -> ConfigurationValue {
        let value: ConfigurationValue
        switch schema.type {
        case .string:
            value = .string(text)
        case .bool:
            switch text {
            case "true": value = .bool(true)
            case "false": value = .bool(false)
            default: throw .invalidParameter(parameter: parameter, reason: "expected true or false, got '\(text)'")
            }
        case .int:
            guard let number = Int64(text) else {
                throw .invalidParameter(parameter: parameter, reason: "expected a 64-bit integer, got '\(text)'")
            }
            value = .int(number)
        case .decimal:
            value = .decimal(try number(text, parameter: parameter))
        case .enumeration:
            guard schema.enumCase(id: text) != nil else {
                throw .invalidParameter(parameter: parameter, reason: schema.notACaseReason(text))
            }
            value = .enumCase(text)
        case .entity:
            var displayName = schema.suggestedEntities.first { $0.id == text }?.displayName
            if displayName == nil, case .entity(text, let name) = schema.defaultValue { displayName = name }
            value = .entity(id: text, displayName: displayName)
        case .date:
            do {
                value = .date(try Timestamp(rfc3339: text))
            } catch {
                throw .invalidParameter(parameter: parameter, reason: error.description)
            }
        case .duration:
            value = .duration(seconds: try number(text, parameter: parameter))
        case .url:
            value = .url(text)
        case .measurement:
            let (amount, unit) = try numberAndSuffix(text, parameter: parameter, expected: "VALUE UNIT")
            value = .measurement(value: amount, unit: unit)
        case .currency:
            let (amount, code) = try numberAndSuffix(text, parameter: parameter, expected: "AMOUNT CODE")
            value = .currency(amount: amount, code: code)
        }
        try value.checkContent(parameter: parameter)
        return value
    }

    /// Throws unless the value's content is valid for its type (enum cases are the schema's concern).
    func checkContent(parameter: String) throws(CoreError) {
        func fail(_ reason: String) -> CoreError { .invalidParameter(parameter: parameter, reason: reason) }
        switch self {
        case .string(let text):
            guard text.utf8.count <= Self.maximumTextBytes else { throw fail("longer than 4096 bytes") }
        case .bool, .int, .date:
            break
        case .decimal(let number):
            guard number.isFinite else { throw fail("must be a finite number") }
        case .enumCase(let id):
            guard !id.isEmpty, id.utf8.count <= Self.maximumTextBytes else { throw fail("must be 1–4096 bytes") }
        case .entity(let id, let displayName):
            guard !id.isEmpty, id.utf8.count <= Self.maximumTextBytes else {
                throw fail("the entity id must be 1–4096 bytes")
            }
            guard (displayName?.utf8.count ?? 0) <= Self.maximumTextBytes else {
                throw fail("the entity display name is longer than 4096 bytes")
            }
        case .duration(let seconds):
            guard seconds.isFinite, seconds >= 0 else { throw fail("must be a finite, non-negative number of seconds") }
        case .url(let text):
            guard text.utf8.count <= Self.maximumTextBytes else { throw fail("longer than 4096 bytes") }
            guard Self.isURL(text) else {
                throw fail("'\(text)' is not a URL: it needs a scheme such as 'https:' and no whitespace")
            }
        case .measurement(let value, let unit):
            guard value.isFinite else { throw fail("the value must be a finite number") }
            guard Self.isUnit(unit) else {
                throw fail("the unit must be 1–255 bytes without control characters or surrounding spaces")
            }
        case .currency(let amount, let code):
            guard amount.isFinite else { throw fail("the amount must be a finite number") }
            guard code.utf8.count == 3, code.utf8.allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) })
            else { throw fail("'\(code)' is not an ISO 4217 code of three upper-case letters") }
        }
    }

    /// A finite number written as decimal text; a failure names `parameter`.
    private static func number(_ text: Substring, parameter: String) throws(CoreError) -> Double {
        guard isDecimalText(text), let number = Double(text), number.isFinite else {
            throw .invalidParameter(parameter: parameter, reason: "expected a finite decimal number, got '\(text)'")
        }
        return number
    }

    private static func number(_ text: String, parameter: String) throws(CoreError) -> Double {
        try number(text[...], parameter: parameter)
    }

    /// Splits `NUMBER SUFFIX` at the first space.
    private static func numberAndSuffix(
        _ text: String, parameter: String, expected: String
    ) throws(CoreError) -> (Double, String) {
        guard let space = text.firstIndex(of: " ") else {
            throw .invalidParameter(parameter: parameter, reason: "expected '\(expected)', got '\(text)'")
        }
        let amount = try number(text[..<space], parameter: parameter)
        return (amount, String(text[text.index(after: space)...]))
    }

    /// Optional sign, digits with an optional fraction (at least one digit), optional exponent.
    static func isDecimalText(_ text: Substring) -> Bool {
        var bytes = text.utf8[...]
        func digits() -> Int {
            let count = bytes.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }.count
            bytes = bytes.dropFirst(count)
            return count
        }
        func sign() {
            if bytes.first == UInt8(ascii: "+") || bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        }
        sign()
        var mantissaDigits = digits()
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            mantissaDigits += digits()
        }
        guard mantissaDigits > 0 else { return false }
        if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            sign()
            guard digits() > 0 else { return false }
        }
        return bytes.isEmpty
    }

    /// A scheme (`[A-Za-z][A-Za-z0-9+.-]*:`) and no whitespace or control characters anywhere.
    static func isURL(_ text: String) -> Bool {
        let bytes = text.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon != bytes.startIndex,
            let first = bytes.first, IdentifierSyntax.isAlphanumeric(first),
            !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first),
            bytes[..<colon].allSatisfy({
                IdentifierSyntax.isAlphanumeric($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: ".")
                    || $0 == UInt8(ascii: "-")
            })
        else { return false }
        return !text.unicodeScalars.contains { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F }
    }

    /// Non-empty, at most 255 bytes, no control characters, no leading or trailing whitespace.
    static func isUnit(_ unit: String) -> Bool {
        guard let first = unit.unicodeScalars.first, let last = unit.unicodeScalars.last,
            unit.utf8.count <= IdentifierSyntax.maximumBytes,
            !first.properties.isWhitespace, !last.properties.isWhitespace
        else { return false }
        return !unit.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
    }
}
