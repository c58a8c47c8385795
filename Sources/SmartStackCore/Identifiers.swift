/// An app's reverse-DNS identifier, such as `com.example.weather`.
///
/// At most 255 bytes of `[A-Za-z0-9._-]`; compared and ordered by its raw text.
public struct AppID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The identifier as the app wrote it.
    public let rawValue: String

    /// Validates `raw`; a failure names `parameter`.
    public init(_ raw: String, parameter: String = "app") throws(CoreError) {
        try IdentifierSyntax.check(
            raw, parameter: parameter, allowed: IdentifierSyntax.isAppIDByte,
            allowedDescription: "letters, digits, '.', '_' and '-'")
        rawValue = raw
    }

    public static func < (lhs: AppID, rhs: AppID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { rawValue }
}

/// A widget kind: the app that provides it and the kind's name within the app.
///
/// The name is at most 255 bytes of `[A-Za-z0-9._/-]`. Ordered by app, then by name.
public struct WidgetKindID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The app that provides the kind.
    public let app: AppID
    /// The kind's name within the app, such as `forecast`.
    public let kind: String

    /// Validates the kind name; a failure names `parameter`.
    public init(app: AppID, kind: String, parameter: String = "kind") throws(CoreError) {
        try IdentifierSyntax.check(
            kind, parameter: parameter, allowed: IdentifierSyntax.isKindNameByte,
            allowedDescription: "letters, digits, '.', '_', '/' and '-'")
        self.app = app
        self.kind = kind
    }

    public static func < (lhs: WidgetKindID, rhs: WidgetKindID) -> Bool {
        lhs.app != rhs.app ? lhs.app < rhs.app : lhs.kind < rhs.kind
    }

    /// `app/kind`; unambiguous because an app id has no `/`.
    public var description: String { "\(app.rawValue)/\(kind)" }
}

/// A widget instance's id, chosen by the shell that placed it.
///
/// 1–255 bytes of printable ASCII without spaces. Compared and ordered by its raw text.
public struct InstanceID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The id as the shell wrote it.
    public let rawValue: String

    /// Validates `raw`; a failure names `parameter`.
    public init(_ raw: String, parameter: String = "instance") throws(CoreError) {
        try IdentifierSyntax.check(
            raw, parameter: parameter, allowed: IdentifierSyntax.isVisibleASCII,
            allowedDescription: "printable ASCII without spaces")
        rawValue = raw
    }

    public static func < (lhs: InstanceID, rhs: InstanceID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { rawValue }
}

/// A stack's id, chosen by the shell.
///
/// 1–255 bytes of printable ASCII without spaces. Compared and ordered by its raw text.
public struct StackID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The id as the shell wrote it.
    public let rawValue: String

    /// Validates `raw`; a failure names `parameter`.
    public init(_ raw: String, parameter: String = "stack") throws(CoreError) {
        try IdentifierSyntax.check(
            raw, parameter: parameter, allowed: IdentifierSyntax.isVisibleASCII,
            allowedDescription: "printable ASCII without spaces")
        rawValue = raw
    }

    public static func < (lhs: StackID, rhs: StackID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { rawValue }
}

/// Byte-level checks shared by the identifier types.
enum IdentifierSyntax {
    /// The longest identifier, in UTF-8 bytes.
    static let maximumBytes = 255

    /// Throws unless `text` is 1–255 bytes, each accepted by `allowed`.
    static func check(
        _ text: String, parameter: String, allowed: (UInt8) -> Bool, allowedDescription: String
    ) throws(CoreError) {
        let count = text.utf8.count
        guard count > 0 else {
            throw .invalidParameter(parameter: parameter, reason: "must not be empty")
        }
        guard count <= maximumBytes else {
            throw .invalidParameter(parameter: parameter, reason: "is \(count) bytes; at most \(maximumBytes) allowed")
        }
        // Scanned in place first (the usual, valid text); the slower walk only finds the byte to name.
        if !text.utf8AllSatisfy(allowed), let bad = text.utf8.firstIndex(where: { !allowed($0) }) {
            let character = text[bad...].unicodeScalars.first.map { $0.escaped(asASCII: true) } ?? "?"
            throw .invalidParameter(
                parameter: parameter, reason: "contains '\(character)'; only \(allowedDescription) are allowed")
        }
    }

    static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    static func isAppIDByte(_ byte: UInt8) -> Bool {
        isAlphanumeric(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
    }

    static func isKindNameByte(_ byte: UInt8) -> Bool { isAppIDByte(byte) || byte == UInt8(ascii: "/") }

    /// `!` through `~`: printable ASCII, no space, no control characters.
    static func isVisibleASCII(_ byte: UInt8) -> Bool { byte > 0x20 && byte < 0x7F }
}

extension String {
    /// Whether every UTF-8 byte of the text satisfies `predicate`, scanned in place: a native string's bytes are
    /// contiguous, and a loop over them is several times faster than one over `utf8`'s indices.
    @inlinable
    public func utf8AllSatisfy(_ predicate: (UInt8) -> Bool) -> Bool {
        if let result = utf8.withContiguousStorageIfAvailable({ $0.allSatisfy(predicate) }) { return result }
        return utf8.allSatisfy(predicate)
    }
}
