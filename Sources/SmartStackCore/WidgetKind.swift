/// Which donated intent type, and which of its parameters, correspond to a kind's configuration.
public struct PredictionMapping: Sendable, Hashable {
    /// The donated intent type, such as `ViewForecastIntent`.
    public var intentType: String
    /// Donated parameter name → configuration parameter name; donated parameters not named here are ignored.
    public var parameters: [String: String]

    public init(intentType: String, parameters: [String: String] = [:]) {
        self.intentType = intentType
        self.parameters = parameters
    }
}

/// A kind of widget an app provides: its families, configuration intent and prediction mappings.
public struct WidgetKind: Sendable, Hashable {
    /// The kind's fields, shared by its copies (the engine reads a kind out of its table for every donation of
    /// its app: one reference counted instead of six).
    private final class Fields: Sendable, Hashable {
        let id: WidgetKindID
        let displayName: String
        let families: Set<WidgetFamily>
        let intent: IntentSchema?
        let predictionMappings: [PredictionMapping]

        init(
            id: WidgetKindID, displayName: String, families: Set<WidgetFamily>, intent: IntentSchema?,
            predictionMappings: [PredictionMapping]
        ) {
            (self.id, self.displayName, self.families, self.intent, self.predictionMappings) =
                (id, displayName, families, intent, predictionMappings)
        }

        static func == (lhs: Fields, rhs: Fields) -> Bool {
            lhs === rhs
                || (lhs.id == rhs.id && lhs.displayName == rhs.displayName && lhs.families == rhs.families
                    && lhs.intent == rhs.intent && lhs.predictionMappings == rhs.predictionMappings)
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(id)
            hasher.combine(displayName)
            hasher.combine(families)
            hasher.combine(intent)
            hasher.combine(predictionMappings)
        }
    }

    private let fields: Fields
    /// The app and the kind's name.
    public var id: WidgetKindID { fields.id }
    /// What a shell shows for the kind.
    public var displayName: String { fields.displayName }
    /// The families the kind can be drawn in; never empty.
    public var families: Set<WidgetFamily> { fields.families }
    /// Why the kind cannot be placed in a stack of `family`, or nil when it can.
    public func unsupported(_ family: WidgetFamily) -> String? {
        families.contains(family) ? nil : "\(id) does not support family \(family.rawValue)"
    }
    /// The configuration intent, or nil when the kind has no configuration.
    public var intent: IntentSchema? { fields.intent }
    /// Further donated intent types that predict this kind's configurations.
    public var predictionMappings: [PredictionMapping] { fields.predictionMappings }

    /// Validates the kind; a failure names the field (`displayName`, `families`, `predictionMappings[i]…`).
    ///
    /// The display name is 1–4096 bytes and `families` non-empty. Each mapping's intent type is 1–255
    /// bytes and named by one mapping only; each mapped donated name is non-empty and each target is
    /// a parameter of `intent`, mapped to by at most one donated name.
    public init(
        id: WidgetKindID, displayName: String, families: Set<WidgetFamily>, intent: IntentSchema? = nil,
        predictionMappings: [PredictionMapping] = []
    ) throws(CoreError) {
        let nameBytes = displayName.utf8.count
        guard nameBytes > 0, nameBytes <= ConfigurationValue.maximumTextBytes else {
            throw .invalidParameter(parameter: "displayName", reason: "must be 1–4096 bytes")
        }
        guard !families.isEmpty else {
            throw .invalidParameter(parameter: "families", reason: "a kind needs at least one family")
        }
        var intentTypes = Set<String>()
        for (index, mapping) in predictionMappings.enumerated() {
            let path = "predictionMappings[\(index)]"
            let typeBytes = mapping.intentType.utf8.count
            guard typeBytes > 0, typeBytes <= IdentifierSyntax.maximumBytes else {
                throw .invalidParameter(parameter: "\(path).intentType", reason: "must be 1–255 bytes")
            }
            guard intentTypes.insert(mapping.intentType).inserted else {
                throw .invalidParameter(
                    parameter: "\(path).intentType", reason: "intent type '\(mapping.intentType)' is mapped twice")
            }
            var targets = Set<String>()
            for (donated, target) in mapping.parameters.sorted(by: { $0.key < $1.key }) {
                let parameter = "\(path).parameters.\(donated)"
                guard !donated.isEmpty else {
                    throw .invalidParameter(parameter: "\(path).parameters", reason: "empty donated parameter name")
                }
                guard intent?.parameter(named: target) != nil else {
                    throw .invalidParameter(parameter: parameter, reason: "no configuration parameter '\(target)'")
                }
                guard targets.insert(target).inserted else {
                    throw .invalidParameter(
                        parameter: parameter, reason: "configuration parameter '\(target)' is mapped twice")
                }
            }
        }
        fields = Fields(
            id: id, displayName: displayName, families: families, intent: intent, predictionMappings: predictionMappings
        )
    }

    /// Checks `values` against the configuration intent and fills in defaults (`IntentSchema.validate(_:)`).
    ///
    /// A kind with no configuration intent accepts only the empty configuration.
    public func validateConfiguration(_ values: [String: ConfigurationValue]) throws(CoreError) -> Configuration {
        if let intent { return try intent.validate(values) }
        if let unknown = values.keys.min() {
            throw .invalidParameter(parameter: "configuration.\(unknown)", reason: "unknown parameter")
        }
        return Configuration()
    }

    /// Whether `donation` is evidence for an instance of this kind with `configuration`.
    ///
    /// The rule:
    /// 1. The donation's app is the kind's app.
    /// 2. Its intent type selects a parameter renaming (donated name → configuration name):
    ///    - a prediction mapping naming the type: that mapping's renaming; donated parameters it does
    ///      not name are ignored (this wins even over the configuration intent's own type);
    ///    - otherwise the configuration intent's type: the identity renaming;
    ///    - otherwise, for a kind with no configuration intent (so apps without configuration work):
    ///      the identity renaming when the type equals the kind's name, or, when the kind has no
    ///      prediction mappings either, for every intent type of the app;
    ///    - otherwise the donation does not match.
    /// 3. Every donated parameter whose renamed name is in `configuration` agrees with its value:
    ///    the text equals the value's `matchKey`, or parses as the parameter's type
    ///    (`ConfigurationValue.parse`) to a value with the same `matchKey` (so `3` matches the
    ///    decimal `3.0`). Parameters present on one side only do not count.
    public func matches(_ donation: Donation, configuration: Configuration) -> Bool {
        guard let renaming = renaming(for: donation) else { return false }
        for (donated, text) in donation.parameters {
            guard let name = renaming.target(of: donated), let value = configuration[name] else { continue }
            guard agrees(text, with: value, parameter: name) else { return false }
        }
        return true
    }

    /// The configuration `donation` implies, or nil when it does not match the kind or does not validate.
    ///
    /// The donation's renamed parameters that name configuration parameters are parsed with
    /// `ConfigurationValue.parse`; missing ones take their defaults (`IntentSchema.validate(_:)`).
    /// A kind with no configuration intent gives the empty configuration for every matching donation.
    public func suggestedConfiguration(for donation: Donation) -> Configuration? {
        guard let renaming = renaming(for: donation) else { return nil }
        guard let intent else { return Configuration() }
        var values: [String: ConfigurationValue] = [:]
        for (donated, text) in donation.parameters {
            guard let name = renaming.target(of: donated), let schema = intent.parameter(named: name) else {
                continue
            }
            guard let value = try? ConfigurationValue.parse(text, as: schema, parameter: "configuration.\(name)")
            else { return nil }
            values[name] = value
        }
        return try? intent.validate(values)
    }

    /// How a donation's parameter names translate to configuration parameter names.
    private enum Renaming {
        case identity
        case mapping([String: String])

        func target(of donated: String) -> String? {
            switch self {
            case .identity: donated
            case .mapping(let names): names[donated]
            }
        }
    }

    /// Steps 1 and 2 of the rule in `matches(_:configuration:)`.
    private func renaming(for donation: Donation) -> Renaming? {
        guard donation.app == id.app else { return nil }
        if let mapping = predictionMappings.first(where: { $0.intentType == donation.intent }) {
            return .mapping(mapping.parameters)
        }
        if let intent {
            return intent.type == donation.intent ? .identity : nil
        }
        return donation.intent == id.kind || predictionMappings.isEmpty ? .identity : nil
    }

    private func agrees(_ text: String, with value: ConfigurationValue, parameter name: String) -> Bool {
        let key = value.matchKey
        if text == key { return true }
        guard let schema = intent?.parameter(named: name),
            let parsed = try? ConfigurationValue.parse(text, as: schema, parameter: name)
        else { return false }
        return parsed.matchKey == key
    }
}
