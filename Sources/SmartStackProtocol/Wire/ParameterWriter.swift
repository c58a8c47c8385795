import SmartStackCore

/// Writes a call's parameters as a client sends them, leaving out what is absent: the inverse of `Parameters`.
///
/// Each request type's `wireParameters` uses it, so `Request(parameters: request.wireParameters)` reads back
/// the same request (`MethodCoverageTests` checks this for every method).
struct ParameterWriter {
    private(set) var object = JSONObject()

    mutating func add(_ key: String, _ value: JSONValue?) {
        if let value { object[key] = value }
    }

    mutating func add(_ key: String, _ value: String?) { add(key, value.map(JSONValue.string)) }
    mutating func add(_ key: String, _ value: Bool?) { add(key, value.map(JSONValue.bool)) }
    mutating func add(_ key: String, _ value: Int?) { add(key, value.map { JSONValue.int(Int64($0)) }) }
    mutating func add(_ key: String, _ value: Double?) { add(key, value.map(JSONValue.double)) }
    mutating func add(_ key: String, _ value: Timestamp?) { add(key, value?.wireValue) }
    mutating func add(_ key: String, _ value: JSONObject?) { add(key, value.map(JSONValue.object)) }
    mutating func add(_ key: String, _ value: [String]?) { add(key, value.map { .array($0.map(JSONValue.string)) }) }

    /// A `[string]string` map, its members sorted by name.
    mutating func add(_ key: String, _ value: [String: String]?) {
        add(key, value.map { Self.map($0) })
    }

    mutating func add(_ key: String, _ objects: [JSONObject]?) {
        add(key, objects.map { .array($0.map(JSONValue.object)) })
    }

    /// A `[string]string` map as a JSON object, its members sorted by name (requests and replies alike).
    static func map(_ map: [String: String]) -> JSONObject {
        var object = JSONObject(minimumCapacity: map.count)
        for (name, value) in map.sorted(by: { $0.key < $1.key }) { object[name] = .string(value) }
        return object
    }
}
