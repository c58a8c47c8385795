import SmartStackCore
import Testing

@testable import SmartStackProtocol

/// Parses JSON text given as a Swift string, failing the test on error.
func parse(_ text: String, maxDepth: Int = 64) throws -> JSONValue {
    try JSON.parse(Array(text.utf8), maxDepth: maxDepth)
}

/// The JSONError for `text`, or nil when it parses.
func parseError(_ text: String, maxDepth: Int = 64) -> JSONError? {
    parseError(bytes: Array(text.utf8), maxDepth: maxDepth)
}

func parseError(bytes: [UInt8], maxDepth: Int = 64) -> JSONError? {
    do {
        _ = try JSON.parse(bytes, maxDepth: maxDepth)
        return nil
    } catch {
        return error
    }
}

func serialized(_ value: JSONValue) -> String { String(decoding: JSON.serialize(value), as: UTF8.self) }

/// A parameter object from JSON text.
func object(_ text: String) throws -> JSONObject {
    let value = try parse(text)
    guard case .object(let object) = value else {
        Issue.record("not an object: \(text)")
        return [:]
    }
    return object
}

/// Decodes `text` as `R`'s parameters, expecting success.
func decode<R: VarlinkMethodRequest>(_: R.Type, _ text: String) throws -> R {
    try R(parameters: object(text))
}

/// The VarlinkError decoding `text` as `R`'s parameters throws, or nil when it decodes.
func decodeError<R: VarlinkMethodRequest>(_: R.Type, _ text: String) throws -> VarlinkError? {
    let parameters = try object(text)
    do {
        _ = try R(parameters: parameters)
        return nil
    } catch {
        return error
    }
}

/// Runs a throwing-VarlinkError body, returning its error.
func varlinkError(_ body: () throws(VarlinkError) -> Void) -> VarlinkError? {
    do {
        try body()
        return nil
    } catch {
        return error
    }
}

enum Fixed {
    /// 2024-03-04T08:00:00-08:00.
    static let start = Timestamp(microseconds: 1_709_568_000_000_000, utcOffsetSeconds: -8 * 3_600)

    static func t(_ seconds: Double) -> Timestamp { start.adding(seconds: seconds) }

    /// The parsed interface `name`.
    static func interface(_ name: String) -> VarlinkIDL.Interface? {
        VarlinkInterfaces.definition(named: name)?.parsed
    }
}
