/// The Varlink interface definition language (varlink.org "Interface Definition"): its model and a parser.
///
/// The parser accepts what both the specification and the Python `varlink` package (the end-to-end tests'
/// client) accept, and nothing more: LF line ends only, no trailing commas, enums of at least two values, a
/// first interface-name label of letters only. It keeps each item's `#` comments as its documentation, so the
/// service's own files can be checked to document every type, field, method and error.
public enum VarlinkIDL {
    /// A type expression.
    public indirect enum TypeExpression: Sendable, Hashable {
        case bool, int, float, string
        /// `object`: any JSON object.
        case object
        /// A `type` declared in the same interface.
        case named(String)
        /// `?T`: the value may be absent or `null`.
        case optional(TypeExpression)
        /// `[]T`.
        case array(TypeExpression)
        /// `[string]T`: an object whose values are `T`.
        case map(TypeExpression)
        /// `[string]()`: an object used as a set of keys.
        case stringSet
        /// `(name: T, …)`.
        case structure([Field])
        /// `(a, b, …)`: one of the names, as a string.
        case enumeration([EnumValue])
    }

    /// A field of a struct, method parameter list or error.
    public struct Field: Sendable, Hashable {
        public var name: String
        public var type: TypeExpression
        /// The `#` comment lines before the field, without `#` and one leading space.
        public var documentation: [String]
    }

    /// A value of an enum.
    public struct EnumValue: Sendable, Hashable {
        public var name: String
        public var documentation: [String]
    }

    /// `type Name (…)`.
    public struct TypeDefinition: Sendable, Hashable {
        public var name: String
        /// A `.structure` or an `.enumeration`.
        public var type: TypeExpression
        public var documentation: [String]
    }

    /// `method Name (…) -> (…)`.
    public struct Method: Sendable, Hashable {
        public var name: String
        public var input: [Field]
        public var output: [Field]
        public var documentation: [String]
    }

    /// `error Name (…)`.
    public struct ErrorDefinition: Sendable, Hashable {
        public var name: String
        public var fields: [Field]
        public var documentation: [String]
    }

    /// A parsed interface file.
    public struct Interface: Sendable, Hashable {
        public var name: String
        public var documentation: [String]
        public var types: [TypeDefinition]
        public var methods: [Method]
        public var errors: [ErrorDefinition]

        public func type(named name: String) -> TypeDefinition? { types.first { $0.name == name } }
        public func method(named name: String) -> Method? { methods.first { $0.name == name } }
        public func error(named name: String) -> ErrorDefinition? { errors.first { $0.name == name } }
    }

    /// Where and why a text is not a valid interface definition.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        /// 1-based line.
        public var line: Int
        /// 1-based column, in bytes.
        public var column: Int
        public var message: String

        public var description: String { "\(line):\(column): \(message)" }
    }

    /// Parses an interface definition and checks it: names, unique members and fields, resolvable type names,
    /// and — when `requireDocumentation` — a `#` comment on the interface and on every type, field, enum value,
    /// method and error.
    public static func parse(_ text: String, requireDocumentation: Bool = false) throws(ParseError) -> Interface {
        var parser = IDLParser(text: text)
        let parsed = try parser.parseInterface()
        try parser.check(parsed, requireDocumentation: requireDocumentation)
        return parsed.interface
    }
}
