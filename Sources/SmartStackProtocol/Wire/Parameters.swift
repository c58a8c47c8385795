import SmartStackCore

/// Strict reading of a Varlink parameter object (or a nested struct) into Swift values.
///
/// Every error is `org.varlink.service.InvalidParameter` naming the value's full path (`widgets[2].instance`,
/// `entries[0].relevance.score`). Members the method does not declare are rejected, so a misspelt optional
/// field is an error rather than silently ignored; `null` means absent for nullable fields and is `required`
/// for the others.
struct Parameters {
    let object: JSONObject
    /// The path of this object; empty at the top level.
    let path: String

    /// Reads `object`, rejecting members not named in `allowed`.
    init(_ object: JSONObject, path: String = "", allowed: [String]) throws(VarlinkError) {
        self.object = object
        self.path = path
        if object.count > allowed.count || object.contains(where: { !allowed.contains($0.key) }) {
            let unknown = object.keys.filter { !allowed.contains($0) }.min() ?? ""
            throw .invalidParameter(self.path(unknown), reason: "unknown parameter")
        }
    }

    /// The full path of member `key`.
    func path(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// The member's value, or `nil` when it is absent or `null`.
    func value(_ key: String) -> JSONValue? {
        guard let value = object[key], !value.isNull else { return nil }
        return value
    }

    func required(_ key: String) throws(VarlinkError) -> JSONValue {
        guard let value = value(key) else { throw .invalidParameter(path(key), reason: "required") }
        return value
    }

    func mismatch(_ key: String, _ expected: String, _ value: JSONValue) -> VarlinkError {
        .invalidParameter(path(key), reason: "expected \(expected), got \(value.typeName)")
    }

    // MARK: Scalars

    func string(_ key: String) throws(VarlinkError) -> String {
        let value = try required(key)
        guard case .string(let text) = value else { throw mismatch(key, "a string", value) }
        return try Self.text(text, at: path(key))
    }

    func optionalString(_ key: String) throws(VarlinkError) -> String? {
        guard let value = value(key) else { return nil }
        guard case .string(let text) = value else { throw mismatch(key, "a string", value) }
        return try Self.text(text, at: path(key))
    }

    /// `text`, unless it holds a NUL (`\u0000`): the frame separator of the protocol, and never meaningful in a
    /// name, an id or a value the service stores, logs or compares.
    /// `path` is built only for the error (most paths are built by concatenation).
    static func text(_ text: String, at path: @autoclosure () -> String) throws(VarlinkError) -> String {
        guard text.utf8AllSatisfy({ $0 != 0 }) else {
            throw .invalidParameter(path(), reason: "contains a NUL character")
        }
        return text
    }

    func optionalBool(_ key: String) throws(VarlinkError) -> Bool? {
        guard let value = value(key) else { return nil }
        guard case .bool(let flag) = value else { throw mismatch(key, "a boolean", value) }
        return flag
    }

    func optionalInt(_ key: String) throws(VarlinkError) -> Int? {
        guard let value = value(key) else { return nil }
        guard case .int(let number) = value else { throw mismatch(key, "an integer", value) }
        return Int(number)
    }

    /// A finite number (an integer or a float).
    func double(_ key: String) throws(VarlinkError) -> Double {
        let value = try required(key)
        guard let number = value.doubleValue else { throw mismatch(key, "a number", value) }
        guard number.isFinite else { throw .invalidParameter(path(key), reason: "must be a finite number") }
        return number
    }

    func optionalDouble(_ key: String) throws(VarlinkError) -> Double? {
        guard value(key) != nil else { return nil }
        return try double(key)
    }

    /// A string that must be one of `T`'s raw values; the error lists them.
    func enumeration<T: RawRepresentable & CaseIterable>(_ key: String, _: T.Type) throws(VarlinkError) -> T
    where T.RawValue == String {
        let text = try string(key)
        guard let value = T(rawValue: text) else {
            let cases = T.allCases.map(\.rawValue).joined(separator: ", ")
            throw .invalidParameter(path(key), reason: "'\(text)' is not one of \(cases)")
        }
        return value
    }

    // MARK: Times

    /// An RFC 3339 time with a UTC offset.
    func optionalTimestamp(_ key: String) throws(VarlinkError) -> Timestamp? {
        guard let text = try optionalString(key) else { return nil }
        do throws(TimestampParseError) {
            return try Timestamp(rfc3339: text)
        } catch {
            throw .invalidParameter(path(key), reason: error.description)
        }
    }

    func timestamp(_ key: String) throws(VarlinkError) -> Timestamp {
        guard let timestamp = try optionalTimestamp(key) else {
            throw .invalidParameter(path(key), reason: "required")
        }
        return timestamp
    }

    // MARK: Containers

    func optionalObject(_ key: String) throws(VarlinkError) -> JSONObject? {
        guard let value = value(key) else { return nil }
        guard case .object(let object) = value else { throw mismatch(key, "an object", value) }
        return object
    }

    func object(_ key: String) throws(VarlinkError) -> JSONObject {
        let value = try required(key)
        guard case .object(let object) = value else { throw mismatch(key, "an object", value) }
        return object
    }

    /// A nested struct, read with its own allowed members.
    func optionalStruct(_ key: String, allowed: [String]) throws(VarlinkError) -> Parameters? {
        guard let object = try optionalObject(key) else { return nil }
        return try Parameters(object, path: path(key), allowed: allowed)
    }

    func `struct`(_ key: String, allowed: [String]) throws(VarlinkError) -> Parameters {
        try Parameters(object(key), path: path(key), allowed: allowed)
    }

    func optionalArray(_ key: String) throws(VarlinkError) -> [JSONValue]? {
        guard let value = value(key) else { return nil }
        guard case .array(let array) = value else { throw mismatch(key, "an array", value) }
        return array
    }

    func array(_ key: String) throws(VarlinkError) -> [JSONValue] {
        let value = try required(key)
        guard case .array(let array) = value else { throw mismatch(key, "an array", value) }
        return array
    }

    /// The array `key` of structs, each read with the members `allowed` (path `key[i]`); at most `maxCount` of them
    /// (more is `InvalidParameter` naming the array).
    func structs(_ key: String, allowed: [String], optional: Bool = false, maxCount: Int = .max) throws(VarlinkError)
        -> [Parameters]
    {
        guard let array = optional ? try optionalArray(key) : try array(key) else { return [] }
        guard array.count <= maxCount else {
            throw .invalidParameter(path(key), reason: "at most \(maxCount) entries; got \(array.count)")
        }
        var result: [Parameters] = []
        result.reserveCapacity(array.count)
        for (index, element) in array.enumerated() {
            let elementPath = "\(path(key))[\(index)]"
            guard case .object(let object) = element else {
                throw .invalidParameter(elementPath, reason: "expected an object, got \(element.typeName)")
            }
            result.append(try Parameters(object, path: elementPath, allowed: allowed))
        }
        return result
    }

    func optionalStringArray(_ key: String) throws(VarlinkError) -> [String]? {
        guard let array = try optionalArray(key) else { return nil }
        var result: [String] = []
        result.reserveCapacity(array.count)
        for (index, element) in array.enumerated() {
            guard case .string(let text) = element else {
                throw .invalidParameter("\(path(key))[\(index)]", reason: "expected a string, got \(element.typeName)")
            }
            result.append(try Self.text(text, at: "\(path(key))[\(index)]"))
        }
        return result
    }

    /// A `[string]string` map.
    func optionalStringMap(_ key: String, maxCount: Int = .max) throws(VarlinkError) -> [String: String]? {
        guard let object = try optionalObject(key) else { return nil }
        guard object.count <= maxCount else {
            throw .invalidParameter(path(key), reason: "at most \(maxCount) entries; got \(object.count)")
        }
        var result: [String: String] = [:]
        result.reserveCapacity(object.count)
        for (name, element) in object {
            guard case .string(let text) = element else {
                throw .invalidParameter("\(path(key)).\(name)", reason: "expected a string, got \(element.typeName)")
            }
            _ = try Self.text(name, at: path(key))
            result[name] = try Self.text(text, at: "\(path(key)).\(name)")
        }
        return result
    }

    func stringMap(_ key: String) throws(VarlinkError) -> [String: String] {
        _ = try required(key)
        return try optionalStringMap(key) ?? [:]
    }

    // MARK: Identifiers

    func appID(_ key: String = "app") throws(VarlinkError) -> AppID {
        let text = try string(key)
        return try Self.core { () throws(CoreError) in try AppID(text, parameter: path(key)) }
    }

    func kindID(app: AppID, _ key: String = "kind") throws(VarlinkError) -> WidgetKindID {
        let text = try string(key)
        return try Self.core { () throws(CoreError) in try WidgetKindID(app: app, kind: text, parameter: path(key)) }
    }

    func stackID(_ key: String = "stack") throws(VarlinkError) -> StackID {
        let text = try string(key)
        return try Self.core { () throws(CoreError) in try StackID(text, parameter: path(key)) }
    }

    func instanceID(_ key: String = "instance") throws(VarlinkError) -> InstanceID {
        let text = try string(key)
        return try Self.core { () throws(CoreError) in try InstanceID(text, parameter: path(key)) }
    }

    func optionalInstanceID(_ key: String = "instance") throws(VarlinkError) -> InstanceID? {
        guard value(key) != nil else { return nil }
        return try instanceID(key)
    }

    /// Runs Core validation whose only errors are `invalidParameter` (identifier syntax and the like).
    static func core<T>(_ body: () throws(CoreError) -> T) throws(VarlinkError) -> T {
        do throws(CoreError) {
            return try body()
        } catch {
            throw VarlinkError(error, interface: VarlinkError.serviceInterface)
        }
    }
}

extension CoreError {
    /// The same error with its parameter path under `prefix` (`widgets[2]` + `configuration.city`); other
    /// cases are unchanged. Core's own helper of this name is internal.
    func underPath(_ prefix: String) -> CoreError {
        guard !prefix.isEmpty, case .invalidParameter(let parameter, let reason) = self else { return self }
        return .invalidParameter(parameter: "\(prefix).\(parameter)", reason: reason)
    }
}
