public import SmartStackCore

/// Configuration values on the wire.
///
/// A value arrives in either of two forms, read by the parameter's type from the kind's schema:
/// - its text form, as donations carry it and `ConfigurationValue.parse` reads it (`"3"`, `"true"`,
///   `"2024-05-01T09:00:00Z"`, `"12.5 km"`, `"9.99 EUR"`, a case id, an entity id);
/// - its JSON form: a boolean for `bool`; a number for `int` (an integer), `decimal` and `duration`;
///   `{"id", "displayName"?}` for an entity, `{"value", "unit"}` for a measurement, `{"amount", "code"}` for a
///   currency.
/// Replies use the JSON form (`wireValue`). `null` means the value is left out.
extension ConfigurationValue {
    /// The JSON form: strings for string, enum, url and date (RFC 3339), booleans, numbers for int, decimal and
    /// duration, and objects for entity, measurement and currency.
    public var wireValue: JSONValue {
        switch self {
        case .string(let text), .url(let text), .enumCase(let text): .string(text)
        case .bool(let flag): .bool(flag)
        case .int(let number): .int(number)
        case .decimal(let number): .double(number)
        case .duration(let seconds): .double(seconds)
        case .date(let timestamp): timestamp.wireValue
        case .entity(let id, let displayName):
            displayName.map { ["id": .string(id), "displayName": .string($0)] } ?? ["id": .string(id)]
        case .measurement(let value, let unit): ["value": .double(value), "unit": .string(unit)]
        case .currency(let amount, let code): ["amount": .double(amount), "code": .string(code)]
        }
    }

    /// Reads a value of `schema`'s parameter in either wire form; a failure names `parameter`.
    public static func wire(
        _ value: JSONValue, as schema: ParameterSchema, parameter: String
    ) throws(CoreError) -> ConfigurationValue {
        func mismatch() -> CoreError {
            .invalidParameter(
                parameter: parameter, reason: "expected a value of type \(schema.type), got \(value.typeName)")
        }
        let result: ConfigurationValue
        switch (value, schema.type) {
        case (.string(let text), _):
            return try parse(text, as: schema, parameter: parameter)
        case (.bool(let flag), .bool):
            result = .bool(flag)
        case (.int(let number), .int):
            result = .int(number)
        case (.int, .decimal), (.double, .decimal):
            result = .decimal(value.doubleValue ?? 0)
        case (.int, .duration), (.double, .duration):
            result = .duration(seconds: value.doubleValue ?? 0)
        case (.object(let object), .entity):
            let fields = try WireFields(object, path: parameter, allowed: ["id", "displayName"])
            let id = try fields.string("id")
            var displayName = try fields.optionalString("displayName")
            if displayName == nil {
                displayName = schema.suggestedEntities.first { $0.id == id }?.displayName
            }
            result = .entity(id: id, displayName: displayName)
        case (.object(let object), .measurement):
            let fields = try WireFields(object, path: parameter, allowed: ["value", "unit"])
            result = .measurement(value: try fields.number("value"), unit: try fields.string("unit"))
        case (.object(let object), .currency):
            let fields = try WireFields(object, path: parameter, allowed: ["amount", "code"])
            result = .currency(amount: try fields.number("amount"), code: try fields.string("code"))
        default:
            throw mismatch()
        }
        try schema.check(result, parameter: parameter)
        return result
    }
}

extension Configuration {
    /// The values in their JSON form, by parameter name (sorted, so replies are stable).
    public var wireObject: JSONObject {
        var object = JSONObject(minimumCapacity: values.count)
        for (name, value) in values.sorted(by: { $0.key < $1.key }) { object[name] = value.wireValue }
        return object
    }
}

/// Reads a wire configuration object against a kind's schema.
enum WireConfiguration {
    /// Typed values by name; names the schema does not have are `unknown parameter`, `null` values are left out.
    /// Errors name `path.NAME` (`widgets[2].configuration.city`). Defaults and required parameters are the
    /// engine's concern (`WidgetKind.validateConfiguration`).
    static func decode(_ object: JSONObject, kind: WidgetKind, path: String) throws(CoreError) -> [String:
        ConfigurationValue]
    {
        var values: [String: ConfigurationValue] = [:]
        values.reserveCapacity(object.count)
        for (name, value) in object {
            let parameter = "\(path).\(name)"
            guard let schema = kind.intent?.parameter(named: name) else {
                throw .invalidParameter(parameter: parameter, reason: "unknown parameter")
            }
            if value.isNull { continue }
            values[name] = try ConfigurationValue.wire(value, as: schema, parameter: parameter)
        }
        return values
    }
}

/// A minimal strict reader for the small objects inside configuration values, throwing Core errors.
private struct WireFields {
    let object: JSONObject
    let path: String

    init(_ object: JSONObject, path: String, allowed: [String]) throws(CoreError) {
        if let unknown = object.keys.filter({ !allowed.contains($0) }).min() {
            throw .invalidParameter(parameter: "\(path).\(unknown)", reason: "unknown field")
        }
        self.object = object
        self.path = path
    }

    func string(_ key: String) throws(CoreError) -> String {
        guard let value = try optionalString(key) else {
            throw .invalidParameter(parameter: "\(path).\(key)", reason: "required")
        }
        return value
    }

    func optionalString(_ key: String) throws(CoreError) -> String? {
        switch object[key] {
        case nil, .null?: return nil
        case .string(let text)?: return text
        case let other?:
            throw .invalidParameter(parameter: "\(path).\(key)", reason: "expected a string, got \(other.typeName)")
        }
    }

    func number(_ key: String) throws(CoreError) -> Double {
        switch object[key] {
        case nil, .null?: throw .invalidParameter(parameter: "\(path).\(key)", reason: "required")
        case let value?:
            guard let number = value.doubleValue else {
                throw .invalidParameter(parameter: "\(path).\(key)", reason: "expected a number, got \(value.typeName)")
            }
            return number
        }
    }
}
