import ArgumentParser
import SmartStackClient
import SmartStackCtlKit
import SmartStackAnalysis
import SmartStackCore
import SmartStackProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// Options every command takes, and the calls they make.
struct GlobalOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The service's address, unix:PATH (default: $SMARTSTACK_ADDRESS, else the user's socket when it exists, "
                + "else the system's)."))
    var address: String?

    @Flag(name: .long, help: "Print one JSON document (watch: one per line) instead of tables.")
    var json = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Seconds a call waits for its reply before giving up (0: no limit; watch waits as long as it runs).",
            valueName: "seconds"))
    var timeout: Double = 120

    func validate() throws {
        guard timeout == 0 || (timeout >= 0.001 && timeout <= 86_400) else {
            throw ValidationError("--timeout must be 0 (no limit) or 0.001…86400 seconds, got \(timeout)")
        }
    }

    /// `--timeout` as a reply timeout (nil for 0).
    var replyTimeout: Duration? { timeout > 0 ? .milliseconds(Int64((timeout * 1_000).rounded())) : nil }

    /// The arguments with global options that precede the subcommand moved after it.
    static func reordered(_ arguments: [String]) -> [String] {
        var leading: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--json" {
                leading.append(argument)
                index += 1
            } else if argument == "--address" || argument == "--timeout", index + 1 < arguments.count {
                leading += [argument, arguments[index + 1]]
                index += 2
            } else if argument.hasPrefix("--address=") || argument.hasPrefix("--timeout=") {
                leading.append(argument)
                index += 1
            } else {
                break
            }
        }
        guard !leading.isEmpty, index < arguments.count else { return arguments }
        return Array(arguments[index...]) + leading
    }

    /// The socket path to connect to: `--address`, else `$SMARTSTACK_ADDRESS`, else ``DefaultSocket``.
    func socketPath() throws -> String {
        if let address { return try Self.path(of: address, option: "--address") }
        if let value = getenv("SMARTSTACK_ADDRESS"), value.pointee != 0 {
            return try Self.path(of: String(cString: value), option: "SMARTSTACK_ADDRESS")
        }
        return DefaultSocket.path(
            userSocket: ServiceDefaults(environment: processEnvironment(), uid: getuid()).socketPath,
            exists: { access($0, F_OK) == 0 })
    }

    /// The path of a `unix:PATH` address, or of a path given as it is (`/run/…`, `./sock`), as `varlinkctl` takes
    /// them.
    static func path(of address: String, option: String) throws -> String {
        if address.hasPrefix("/") || address.hasPrefix("./") { return address }
        guard address.hasPrefix("unix:"), address.count > 5 else {
            throw ValidationError("\(option) must look like unix:PATH (or a path), got '\(address)'")
        }
        let path = String(address.dropFirst(5))
        guard !path.hasPrefix("@") else {
            throw ValidationError("\(option): abstract sockets (unix:@NAME) are not supported, got '\(address)'")
        }
        return path
    }

    /// The address as printed in messages.
    func addressText() -> String {
        (try? socketPath()).map { "unix:" + $0 } ?? (address ?? "?")
    }

    /// Runs `body` on a fresh connection; client errors become ``CtlFailure``s naming the address.
    func withClient<Result: Sendable>(_ body: (inout VarlinkClient) async throws -> Result) async throws -> Result {
        let path = try socketPath()
        do {
            return try await VarlinkClient.withConnection(path: path, replyTimeout: replyTimeout, body)
        } catch let error as VarlinkClientError {
            throw CtlFailure(error, address: "unix:" + path)
        }
    }

    /// Makes one typed call on a fresh connection. `make` builds the request from the command line: a value
    /// the request's checks refuse fails here, before connecting, with the error the service would have
    /// returned (the same code checks it; exit status 2).
    func call<Request: VarlinkMethodRequest>(_ make: () throws(VarlinkError) -> Request) async throws -> JSONObject {
        let request = try Self.validated(make)
        return try await withClient { client in try await client.call(request) }
    }

    /// One call of a request read from parameters the command line assembled, where it merges JSON the user
    /// gave (`--definition`, `--widgets-json`, `--config`); read here, so a wrong member fails before connecting.
    func call<Request: VarlinkMethodRequest>(_: Request.Type, _ parameters: JSONObject) async throws -> JSONObject {
        try await call { () throws(VarlinkError) in try Request(parameters: parameters) }
    }

    /// Runs a typed stream on a fresh connection until `body` returns `false` or the stream ends.
    func stream<Request: VarlinkMethodRequest>(
        _ make: () throws(VarlinkError) -> Request, _ body: (JSONObject) async throws -> Bool
    ) async throws {
        let request = try Self.validated(make)
        try await withClient { client in try await client.stream(request, body) }
    }

    /// What `make` builds from the command line; its error is reported as the service's.
    static func checked<Value>(_ make: () throws(VarlinkError) -> Value) throws -> Value {
        do throws(VarlinkError) { return try make() } catch { throw CtlFailure.service(error) }
    }

    /// The request `make` builds, read back with its method's own decoder (the service's): a value a request's
    /// initializer does not check (an empty context key, a date out of range) fails here, before connecting, with the
    /// error the service would return.
    static func validated<Request: VarlinkMethodRequest>(_ make: () throws(VarlinkError) -> Request) throws -> Request {
        let request = try checked(make)
        _ = try checked { () throws(VarlinkError) in try Request(parameters: request.wireParameters) }
        return request
    }

    /// The style for standard output.
    var style: Style { Terminal.current().outputStyle }

    /// Prints a reply: JSON with --json, otherwise `text()`.
    func emit(_ reply: JSONObject, text: () -> String) {
        Output.line(json ? JSONText.compact(reply) : text())
    }
}

/// The environment variables the default socket path depends on.
func processEnvironment() -> [String: String] {
    var environment: [String: String] = [:]
    for name in ["XDG_RUNTIME_DIR", "HOME", "XDG_DATA_HOME", "STATE_DIRECTORY"] {
        if let value = getenv(name) { environment[name] = String(cString: value) }
    }
    return environment
}

/// Command-line text as the typed values of requests, refused with the error the service would return for it
/// (`InvalidParameter` naming the parameter).
enum Typed {
    static func app(_ text: String) throws(VarlinkError) -> AppID {
        try check { () throws(CoreError) in try AppID(text) }
    }

    static func stack(_ text: String) throws(VarlinkError) -> StackID {
        try check { () throws(CoreError) in try StackID(text) }
    }

    static func instance(_ text: String, parameter: String = "instance") throws(VarlinkError) -> InstanceID {
        try check { () throws(CoreError) in try InstanceID(text, parameter: parameter) }
    }

    static func instances(_ texts: [String], parameter: String) throws(VarlinkError) -> [InstanceID] {
        var result: [InstanceID] = []
        for (index, text) in texts.enumerated() {
            result.append(try instance(text, parameter: "\(parameter)[\(index)]"))
        }
        return result
    }

    /// Values given as `NAME=VALUE` pairs (`--param`, `--state`).
    static func pairs(_ items: [String], option: String) throws -> [String: String] {
        var map: [String: String] = [:]
        for (name, value) in try Arguments.pairs(items, option: option) { map[name] = value.stringValue }
        return map
    }

    static func check<T>(_ body: () throws(CoreError) -> T) throws(VarlinkError) -> T {
        do throws(CoreError) { return try body() } catch {
            throw VarlinkError(error, interface: VarlinkError.serviceInterface)
        }
    }
}

/// Command-line values to wire values.
enum Arguments {
    /// `NAME=VALUE` pairs as an object of strings; `option` names the flag in errors.
    static func pairs(_ items: [String], option: String) throws -> JSONObject {
        var object = JSONObject()
        for item in items {
            guard let equals = item.firstIndex(of: "="), equals != item.startIndex else {
                throw ValidationError("\(option) must be NAME=VALUE, got '\(item)'")
            }
            object[String(item[..<equals])] = .string(String(item[item.index(after: equals)...]))
        }
        return object
    }

    /// `text` with each `%XX` replaced by its byte (the result must be UTF-8); `option` names the flag in errors.
    static func percentDecoded(_ text: Substring, option: String) throws -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            func hex(_ byte: UInt8) -> Bool {
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
            }
            // Two hex digits exactly (UInt8(_:radix:) also took a sign: "%+A" was a newline).
            guard utf8.count >= 2, utf8.prefix(2).allSatisfy(hex),
                let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16)
            else {
                throw ValidationError(
                    "\(option): '%' must start an escape of two hex digits (%25 for '%'), in '\(text)'")
            }
            bytes.append(value)
            utf8 = utf8.dropFirst(2)
        }
        guard let decoded = String(validating: bytes, as: UTF8.self) else {
            throw ValidationError("\(option): the escapes in '\(text)' are not UTF-8")
        }
        return decoded
    }

    /// A JSON object given on the command line.
    static func object(_ text: String, option: String) throws -> JSONObject {
        let value: JSONValue
        do { value = try JSON.parse(Array(text.utf8)) } catch {
            throw ValidationError("\(option) is not JSON: \(error)")
        }
        guard case .object(let object) = value else { throw ValidationError("\(option) must be a JSON object") }
        return object
    }

    /// Adds `date` (or `at`) when given.
    static func add(_ key: String, _ value: String?, to object: inout JSONObject) {
        if let value { object[key] = .string(value) }
    }

    static func add(_ key: String, _ value: TimeArgument?, to object: inout JSONObject) {
        if let value { object[key] = .string(value.rfc3339) }
    }
}

/// A time on the command line, in one syntax for every option that takes one (`--date`, `--at`, `--since`,
/// `--until`): RFC 3339, `YYYY-MM-DD [HH:MM[:SS]]` on the local clock, `now`, `today`, `yesterday`,
/// `tomorrow`, or relative (`-1h`, `+30min`, `2d ago`); with or without `=` (`--since -1h`, `--since=-1h`).
/// Sent to the service as RFC 3339: with the offset it was written with (RFC 3339), else the local UTC offset.
struct TimeArgument: ExpressibleByArgument, Sendable {
    /// Microseconds since the epoch.
    let microseconds: Int64
    let utcOffsetSeconds: Int32

    init?(argument: String) {
        // To the microsecond: `now` is later than what this client recorded a moment ago.
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        let now = Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1_000
        let offset = TimeExpression.localOffset(atSeconds: Int64(spec.tv_sec))
        guard
            let parsed = try? TimeExpression.parse(
                argument, now: now, utcOffsetSeconds: offset, offsetAt: TimeExpression.localOffset(atSeconds:))
        else { return nil }
        microseconds = parsed
        // An RFC 3339 time keeps the offset it was written with: the service learns the hour of the day and the
        // day of the week on the clock the time names (`09:00-08:00` is 9 in the morning, not 17:00 here).
        if let written = try? Timestamp(rfc3339: argument),
            written.microseconds == parsed
        {
            utcOffsetSeconds = written.utcOffsetSeconds
        } else {
            utcOffsetSeconds = TimeExpression.localOffset(atSeconds: parsed / 1_000_000)
        }
    }

    var rfc3339: String { timestamp.rfc3339 }
    var timestamp: Timestamp { Timestamp(microseconds: microseconds, utcOffsetSeconds: utcOffsetSeconds) }

    /// The forms a time takes, as help texts and errors name them.
    static var forms: String { TimeExpression.forms }

    /// An option's help: what the time is, then the forms it takes.
    static func help(_ what: String) -> ArgumentHelp { ArgumentHelp("\(what) (\(forms)).") }
}
