/// The type of a configuration parameter; the raw values are the names used on the wire.
public enum ParameterType: String, CaseIterable, Sendable, Hashable, CustomStringConvertible {
    /// Free text.
    case string
    /// `true` or `false`.
    case bool
    /// A signed 64-bit integer.
    case int
    /// A finite floating-point number.
    case decimal
    /// One of a static list of cases (`EnumCase`).
    case enumeration = "enum"
    /// A dynamic value: an entity id with an optional display name.
    case entity
    /// A point in time.
    case date
    /// A non-negative number of seconds.
    case duration
    /// A URL with a scheme.
    case url
    /// A number with a unit, such as `12.5 km`.
    case measurement
    /// An amount with an ISO 4217 code, such as `9.99 EUR`.
    case currency

    public var description: String { rawValue }
}

/// One case of an `enum` parameter.
public struct EnumCase: Sendable, Hashable {
    /// The stable id stored in configurations and compared with donations.
    public var id: String
    /// What a shell shows for the case.
    public var displayName: String

    public init(id: String, displayName: String) {
        self.id = id
        self.displayName = displayName
    }
}

/// An entity a provider suggests for an `entity` parameter.
public struct EntityOption: Sendable, Hashable {
    /// The entity's stable id.
    public var id: String
    /// What a shell shows for the entity.
    public var displayName: String

    public init(id: String, displayName: String) {
        self.id = id
        self.displayName = displayName
    }
}

/// One parameter of a configuration intent.
///
/// A plain value: `IntentSchema`'s initialiser validates it in context (unique names, cases, default).
public struct ParameterSchema: Sendable, Hashable {
    /// The parameter's name: 1–255 bytes of `[A-Za-z0-9._-]`, unique within the intent.
    public var name: String
    /// The type every value of the parameter has.
    public var type: ParameterType
    /// What a shell shows as the parameter's label.
    public var title: String?
    /// Whether a configuration may leave the parameter out when it has no default.
    public var optional: Bool
    /// The value a configuration that leaves the parameter out gets (for `entity`, the default entity).
    public var defaultValue: ConfigurationValue?
    /// The cases of an `enum` parameter (at least one); empty for every other type.
    public var cases: [EnumCase]
    /// The entities a provider suggests for an `entity` parameter; empty for every other type.
    public var suggestedEntities: [EntityOption]

    public init(
        name: String, type: ParameterType, title: String? = nil, optional: Bool = false,
        defaultValue: ConfigurationValue? = nil, cases: [EnumCase] = [], suggestedEntities: [EntityOption] = []
    ) {
        self.name = name
        self.type = type
        self.title = title
        self.optional = optional
        self.defaultValue = defaultValue
        self.cases = cases
        self.suggestedEntities = suggestedEntities
    }

    /// The case with `id`, if the parameter is an enum that has it.
    public func enumCase(id: String) -> EnumCase? { cases.first { $0.id == id } }
}

/// A widget kind's configuration intent: an intent type name and its parameters, validated.
public struct IntentSchema: Sendable, Hashable {
    /// The intent type name, such as `SelectCityIntent`: 1–255 bytes.
    public let type: String
    /// The parameters, in the provider's order.
    public let parameters: [ParameterSchema]

    /// Validates the schema; a failure names the offending field below `parameter`.
    ///
    /// Checked: the type name is 1–255 bytes; parameter names are 1–255 bytes of `[A-Za-z0-9._-]`
    /// and unique; an enum has at least one case, case ids are non-empty and unique; only an enum
    /// has cases and only an entity has suggested entities, with non-empty unique ids; a default has
    /// the parameter's type and is a valid value of it (for an enum, one of its cases).
    public init(type: String, parameters: [ParameterSchema], parameter: String = "intent") throws(CoreError) {
        let typeBytes = type.utf8.count
        guard typeBytes > 0, typeBytes <= IdentifierSyntax.maximumBytes else {
            throw .invalidParameter(parameter: "\(parameter).type", reason: "must be 1–255 bytes")
        }
        var seen = Set<String>()
        for (index, schema) in parameters.enumerated() {
            let path = "\(parameter).parameters[\(index)]"
            try schema.checkDefinition(path: path)
            guard seen.insert(schema.name).inserted else {
                throw .invalidParameter(parameter: "\(path).name", reason: "duplicate parameter name '\(schema.name)'")
            }
        }
        self.type = type
        self.parameters = parameters
    }

    /// The parameter named `name`, if there is one.
    public func parameter(named name: String) -> ParameterSchema? { parameters.first { $0.name == name } }
}

extension ParameterSchema {
    /// Throws unless this is a well-formed parameter definition; errors name fields below `path`.
    func checkDefinition(path: String) throws(CoreError) {
        try IdentifierSyntax.check(
            name, parameter: "\(path).name", allowed: IdentifierSyntax.isAppIDByte,
            allowedDescription: "letters, digits, '.', '_' and '-'")
        if let title, title.utf8.count > ConfigurationValue.maximumTextBytes {
            throw .invalidParameter(parameter: "\(path).title", reason: "longer than 4096 bytes")
        }
        if type == .enumeration {
            guard !cases.isEmpty else {
                throw .invalidParameter(parameter: "\(path).cases", reason: "an enum needs at least one case")
            }
            try Self.checkOptions(cases.map { ($0.id, $0.displayName) }, path: "\(path).cases")
        } else if !cases.isEmpty {
            throw .invalidParameter(parameter: "\(path).cases", reason: "only an enum parameter has cases")
        }
        if type == .entity {
            try Self.checkOptions(suggestedEntities.map { ($0.id, $0.displayName) }, path: "\(path).suggestedEntities")
        } else if !suggestedEntities.isEmpty {
            throw .invalidParameter(
                parameter: "\(path).suggestedEntities", reason: "only an entity parameter has suggested entities")
        }
        if let defaultValue {
            try check(defaultValue, parameter: "\(path).default")
        }
    }

    /// Checks ids (non-empty, unique, ≤ 4096 bytes) and display names (≤ 4096 bytes) of cases or entities.
    private static func checkOptions(_ options: [(id: String, displayName: String)], path: String) throws(CoreError) {
        var ids = Set<String>()
        for (index, option) in options.enumerated() {
            let idBytes = option.id.utf8.count
            guard idBytes > 0, idBytes <= ConfigurationValue.maximumTextBytes else {
                throw .invalidParameter(parameter: "\(path)[\(index)].id", reason: "must be 1–4096 bytes")
            }
            guard ids.insert(option.id).inserted else {
                throw .invalidParameter(parameter: "\(path)[\(index)].id", reason: "duplicate id '\(option.id)'")
            }
            guard option.displayName.utf8.count <= ConfigurationValue.maximumTextBytes else {
                throw .invalidParameter(parameter: "\(path)[\(index)].displayName", reason: "longer than 4096 bytes")
            }
        }
    }

    /// Throws unless `value` has this parameter's type and is a valid value of it; errors name `parameter`.
    public func check(_ value: ConfigurationValue, parameter: String) throws(CoreError) {
        guard value.type == type else {
            throw .invalidParameter(
                parameter: parameter, reason: "expected a value of type \(type), got \(value.type)")
        }
        if case .enumCase(let id) = value, enumCase(id: id) == nil {
            throw .invalidParameter(parameter: parameter, reason: notACaseReason(id))
        }
        try value.checkContent(parameter: parameter)
    }

    /// Why `id` is not accepted for this enum parameter.
    func notACaseReason(_ id: String) -> String {
        "'\(id)' is not a case; expected one of \(cases.map(\.id).joined(separator: ", "))"
    }
}
