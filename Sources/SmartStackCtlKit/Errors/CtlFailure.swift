public import SmartStackClient
public import SmartStackProtocol

/// smartstackctl's exit statuses: sysexits(3) where one fits, and 2 for an error the service returned.
public enum ExitStatus: Int32, Sendable, CaseIterable {
    /// Done.
    case success = 0
    /// Anything else that went wrong.
    case failure = 1
    /// The service answered with a typed Varlink error (its name and parameters are printed).
    case serviceError = 2
    /// The command line is wrong (`EX_USAGE`).
    case usage = 64
    /// An input file is malformed, such as a usage log (`EX_DATAERR`).
    case dataError = 65
    /// An input file or journal cannot be opened (`EX_NOINPUT`).
    case noInput = 66
    /// The service cannot be reached: no socket, nobody listening, connection lost (`EX_UNAVAILABLE`).
    case unavailable = 69
    /// An output file cannot be written (`EX_CANTCREAT`).
    case cannotCreate = 73
    /// The service sent something that is not Varlink (`EX_PROTOCOL`).
    case protocolError = 76

    /// One line for the documentation and `--help`.
    public var meaning: String {
        switch self {
        case .success: "success"
        case .failure: "other failure"
        case .serviceError: "the service returned an error (its Varlink name and parameters are printed)"
        case .usage: "usage error: unknown command or option, bad value"
        case .dataError: "malformed input file (usage log)"
        case .noInput: "input file or journal cannot be opened"
        case .unavailable: "the service cannot be reached (the address tried is printed)"
        case .cannotCreate: "an output file cannot be written"
        case .protocolError: "the service's reply is not valid Varlink"
        }
    }
}

/// A failure of a command, with the exit status it maps to and what to print.
public enum CtlFailure: Error, Sendable, Equatable {
    /// No connection to the service at `address`.
    case unreachable(address: String, reason: String)
    /// The service returned a typed error.
    case service(VarlinkError)
    /// The reply was not Varlink.
    case protocolViolation(String)
    /// A malformed input file.
    case badInput(String)
    /// An input that cannot be opened.
    case noInput(String)
    /// An output that cannot be written.
    case cannotCreate(String)

    /// The failure a client error stands for, for a call to `address`.
    public init(_ error: VarlinkClientError, address: String) {
        switch error {
        case .remote(let remote): self = .service(remote)
        case .connection(let reason): self = .unreachable(address: address, reason: Self.strip(reason))
        case .protocolViolation(let reason): self = .protocolViolation(reason)
        }
    }

    /// The exit status.
    public var status: ExitStatus {
        switch self {
        case .unreachable: .unavailable
        case .service: .serviceError
        case .protocolViolation: .protocolError
        case .badInput: .dataError
        case .noInput: .noInput
        case .cannotCreate: .cannotCreate
        }
    }

    /// What to print on standard error, one or more lines, styled for a terminal.
    public func message(style: Style = .plain) -> String {
        let prefix = "smartstackctl: "
        switch self {
        case .unreachable(let address, let reason) where reason.contains("Permission denied"):
            let hint =
                address == "unix:" + ServiceDefaults.systemSocketPath
                ? "The system service's socket is for the group smartstack: add the user "
                    + "(usermod -aG smartstack USER) and log in again, or name another socket with --address unix:PATH."
                : "Name a socket this user may open with --address unix:PATH."
            return style.bad(prefix + "cannot reach smartstackd at \(address): \(reason)") + "\n"
                + "This user may not open the socket. " + hint
        case .unreachable(let address, let reason) where reason.contains("no reply within"):
            // Reached and running, but slow: the hint to start it would mislead.
            return style.bad(prefix + "smartstackd at \(address) did not answer: \(reason)") + "\n"
                + "The service is running but busy or stopped answering: try again, or allow longer with --timeout SECONDS."
        case .unreachable(let address, let reason) where reason.contains("not a socket"):
            return style.bad(prefix + "cannot reach smartstackd at \(address): \(reason)") + "\n"
                + "Name the service's socket with --address unix:PATH (the default: smartstackctl --help)."
        case .unreachable(let address, let reason):
            return style.bad(prefix + "cannot reach smartstackd at \(address): \(reason)") + "\n"
                + "Is the service running? Check with: systemctl status smartstackd.socket smartstackd.service\n"
                + "(a user instance: systemctl --user status smartstackd), or name another socket with --address unix:PATH."
        case .service(let error):
            var line = prefix + error.name
            let parameters = error.parameters.map { "\($0.key)=\(Self.text($0.value))" }
            if !parameters.isEmpty { line += ": " + parameters.joined(separator: " ") }
            return style.bad(line)
        case .protocolViolation(let reason): return style.bad(prefix + "not a Varlink reply: \(reason)")
        case .badInput(let reason), .noInput(let reason), .cannotCreate(let reason):
            return style.bad(prefix + reason)
        }
    }

    /// Whether a command that follows a stream (`watch --reconnect`) should connect again: the service was not
    /// reachable, closed the connection, or is stopping (a restart). Any other error is the call's own.
    public var isWorthReconnecting: Bool {
        switch self {
        case .unreachable: true
        case .service(let error): error.name.hasSuffix(".ServiceStopping")
        case .protocolViolation, .badInput, .noInput, .cannotCreate: false
        }
    }

    /// One line saying what happened, without the advice `message` adds.
    public var summary: String {
        switch self {
        case .unreachable(let address, let reason): "cannot reach smartstackd at \(address): \(reason)"
        case .service(let error): error.name
        case .protocolViolation(let reason): "not a Varlink reply: \(reason)"
        case .badInput(let reason), .noInput(let reason), .cannotCreate(let reason): reason
        }
    }

    /// The JSON form of a service error for `--json` (`{"error": NAME, "parameters": {...}}`); `nil` otherwise.
    public var jsonDocument: JSONObject? {
        switch self {
        case .service(let error):
            ["error": .string(error.name), "parameters": .object(error.parameters)]
        case .unreachable(let address, let reason):
            ["error": .string("unreachable"), "parameters": ["address": .string(address), "reason": .string(reason)]]
        default:
            nil
        }
    }

    /// A parameter value as `KEY=VALUE` shows it.
    static func text(_ value: JSONValue) -> String {
        if case .string(let text) = value { return text.contains(" ") ? "'\(text)'" : text }
        return String(decoding: JSON.serialize(value), as: UTF8.self)
    }

    /// The client's "cannot connect to PATH: " prefix and NIO's call syntax dropped; the errno text kept.
    static func strip(_ reason: String) -> String {
        var text = reason
        if text.hasPrefix("cannot connect to "), let colon = text.firstRange(of: ": ") {
            text = String(text[colon.upperBound...])
        }
        // NIO describes a failed connect as "connect(descriptor:addr:size:): No such file or directory (errno: 2)".
        if let call = text.firstRange(of: "): ") { text = String(text[call.upperBound...]) }
        // ... and closes a parenthesis it never opened: "No such file or directory) (errno: 2)".
        if let stray = text.firstRange(of: ") (errno: ") { text.replaceSubrange(stray, with: " (errno ") }
        return text
    }
}
