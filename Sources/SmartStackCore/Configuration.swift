/// The parameter values a widget instance is configured with.
///
/// Instances of one kind with different configurations are different widgets; two configurations
/// are the same when they have the same names with equal values (see `ConfigurationValue`), which
/// is exactly when their `canonicalKey`s are equal. Build one with `IntentSchema.validate(_:)` or
/// `WidgetKind.validateConfiguration(_:)` to have it checked and its defaults filled in.
public struct Configuration: Sendable, Hashable, CustomStringConvertible {
    /// The values by parameter name.
    public var values: [String: ConfigurationValue]

    /// A configuration with `values`, unchecked.
    public init(_ values: [String: ConfigurationValue] = [:]) {
        self.values = values
    }

    /// The value of the parameter `name`, if the configuration has one.
    public subscript(name: String) -> ConfigurationValue? { values[name] }

    /// Whether the configuration has no values.
    public var isEmpty: Bool { values.isEmpty }

    /// A stable text form: `name=type:matchKey` sorted by name and joined by `;`.
    ///
    /// For example `city=entity:berlin;units=enum:metric`; the empty configuration gives `""`.
    /// `%`, `;` and `=` in names and values are written as `%25`, `%3B` and `%3D`, so the form is
    /// unambiguous; it suits storage keys and logs.
    public var canonicalKey: String {
        values.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            .map { "\(Self.escape($0.key))=\($0.value.type.rawValue):\(Self.escape($0.value.matchKey))" }
            .joined(separator: ";")
    }

    public var description: String { canonicalKey }

    /// A readable, stable text form for ids: `name=value` sorted by name and joined by `&`, each value in its
    /// matching text (an entity's id), with `%`, `&` and `=` written `%25`, `%26` and `%3D`, and every byte outside
    /// visible ASCII as `%XX` (`city=S%C3%A3o%20Paulo`). For example `city=Berlin&units=metric`. Unique within one
    /// kind, whose schema gives each name one type.
    public var queryText: String {
        values.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            .map { "\(Self.queryEscape($0.key))=\(Self.queryEscape($0.value.matchKey))" }
            .joined(separator: "&")
    }

    /// `text` with `%`, `=`, `&` and every byte that is not visible ASCII (a space, UTF-8 beyond ASCII) as `%XX`:
    /// the text of a suggestion's entry id, which a shell sends back as an instance id (visible ASCII; "New York" or
    /// "São Paulo" written as they are made the id one no call accepted).
    private static func queryEscape(_ text: String) -> String {
        func special(_ byte: UInt8) -> Bool {
            byte <= 0x20 || byte >= 0x7F || byte == UInt8(ascii: "%") || byte == UInt8(ascii: "=")
                || byte == UInt8(ascii: "&")
        }
        guard text.utf8.contains(where: special) else { return text }
        let digits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 8)
        for byte in text.utf8 {
            if special(byte) {
                out += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
            } else {
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `text` with `%`, `=` and `separator` (ASCII) percent-encoded: `%25`, `%3D`, and the separator's code.
    private static func escape(_ text: String, separator: UInt8 = UInt8(ascii: ";")) -> String {
        func special(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: "%") || byte == UInt8(ascii: "=") || byte == separator
        }
        guard text.utf8.contains(where: special) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 8)
        for character in text.unicodeScalars {
            if character.isASCII, special(UInt8(character.value)) {
                out += "%" + String(character.value, radix: 16, uppercase: true)
            } else {
                out.unicodeScalars.append(character)
            }
        }
        return out
    }
}

extension IntentSchema {
    /// Checks `values` against the schema and fills in defaults; a failure names `configuration.NAME`.
    ///
    /// A name the schema does not have is `unknown parameter`; a value must have the parameter's type
    /// and be valid for it (an enum value must be one of the cases); a missing value takes the
    /// parameter's default, stays missing when the parameter is optional, and is otherwise `required`.
    /// Unknown names are reported first (the smallest one), then parameters in schema order.
    public func validate(_ values: [String: ConfigurationValue]) throws(CoreError) -> Configuration {
        let known = Set(parameters.map(\.name))
        if let unknown = values.keys.filter({ !known.contains($0) }).min() {
            throw .invalidParameter(parameter: "configuration.\(unknown)", reason: "unknown parameter")
        }
        var result: [String: ConfigurationValue] = [:]
        result.reserveCapacity(parameters.count)
        for schema in parameters {
            let path = "configuration.\(schema.name)"
            if let value = values[schema.name] {
                try schema.check(value, parameter: path)
                result[schema.name] = value
            } else if let defaultValue = schema.defaultValue {
                result[schema.name] = defaultValue
            } else if !schema.optional {
                throw .invalidParameter(parameter: path, reason: "required")
            }
        }
        return Configuration(result)
    }
}
