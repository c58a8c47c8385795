/// One Varlink method call, decoded from a message.
///
/// The envelope is checked here (an object with a `method` string naming `interface.Method`, an optional
/// `parameters` object and optional boolean flags); anything wrong with it is a framing error, after which the
/// server closes the connection. The parameters themselves are checked by the request types, whose errors are
/// replies. Unknown envelope keys are ignored, as the Varlink specification lets later versions add them.
public struct VarlinkCall: Sendable {
    /// The fully qualified method name, such as `io.smartstack.Shell.GetStack`.
    public var method: String {
        didSet {
            // A request read for the old method is not one of the new method's: its parameters stay as they were.
            if decodedBox != nil { storedParameters = parameters }
            decodedBox = nil
            known = SmartStackMethod(rawValue: method)
        }
    }
    /// The service's own method `method` names, if it is one: looked up once per call (a hash of the name), not
    /// by each step that needs it (framing, access control, decoding).
    public private(set) var known: SmartStackMethod?
    /// The call's parameters; empty when the message has none (or `null`). For a call whose method read its plain
    /// parameters itself (`decodedBox`), they are built from the request when asked for.
    public var parameters: JSONObject {
        get {
            if let decodedBox { return decodedBox.request.wireParameters }
            return storedParameters
        }
        set {
            storedParameters = newValue
            decodedBox = nil
        }
    }
    /// The parameters as read or set (empty while `decodedBox` holds the request instead).
    private var storedParameters = JSONObject()
    /// The request, when the envelope's fast path had its method read it straight from the message's plain
    /// parameters (`VarlinkMethodRequest.decodePlain`); `SmartStackRequest(call:)` then takes it as it is.
    /// Boxed: a request is several times the size of the rest of the call, which is copied on its way to the
    /// dispatcher (unboxed, every call's decoding, `Donate`'s included, cost more).
    private(set) var decodedBox: DecodedRequest?
    /// The caller wants no reply, not even an error.
    public var oneway: Bool
    /// The caller accepts several replies (a stream); every reply but the last has `continues`.
    public var more: Bool
    /// The caller wants to switch the connection to another protocol after the reply. No method of this service
    /// does: such a call is answered `InvalidParameter {parameter: "upgrade"}` (`SmartStackRequest(call:)`).
    public var upgrade: Bool

    /// The interface: `method` up to its last `.` (`io.smartstack.Shell`).
    public var interface: Substring {
        guard let dot = method.lastIndex(of: ".") else { return method[...] }
        return method[..<dot]
    }

    /// The method's own name: `method` after its last `.` (`GetStack`).
    public var methodName: Substring {
        guard let dot = method.lastIndex(of: ".") else { return method[...] }
        return method[method.index(after: dot)...]
    }

    /// A call built in code (tests, clients).
    public init(
        method: String, parameters: JSONObject = [:], oneway: Bool = false, more: Bool = false, upgrade: Bool = false
    ) {
        self.method = method
        self.known = SmartStackMethod(rawValue: method)
        self.storedParameters = parameters
        self.oneway = oneway
        self.more = more
        self.upgrade = upgrade
    }

    /// Decodes a message (without its NUL).
    public init(frame: [UInt8]) throws(VarlinkFramingError) {
        let parsed = frame.withUnsafeBufferPointer { bytes in
            Result { () throws(VarlinkFramingError) in try VarlinkCall(bytes: bytes) }
        }
        self = try parsed.get()
    }

    /// Decodes a message (without its NUL) where it lies, in the connection's input.
    ///
    /// The usual call (one of the service's methods, the envelope's members only, each once) is read without
    /// building the envelope as an object (`JSONParser.parseCallEnvelope`); anything else, errors included, goes
    /// through the general parser, so both give the same call and the same error.
    public init(bytes frame: UnsafeBufferPointer<UInt8>) throws(VarlinkFramingError) {
        var parser = JSONParser(bytes: frame, maxDepth: JSON.defaultMaxDepth)
        if let envelope = parser.parseCallEnvelope() {
            self = try VarlinkCall(envelope)
        } else {
            self = try VarlinkCall(general: frame)
        }
    }

    private init(_ envelope: CallEnvelope) throws(VarlinkFramingError) {
        // The method's name is the enumeration's literal: no copy of the bytes.
        method = envelope.method.rawValue
        known = envelope.method
        if let request = envelope.request {
            decodedBox = request
        } else {
            storedParameters = try Self.parameters(envelope.parameters)
        }
        oneway = try Self.flag("oneway", envelope.oneway)
        more = try Self.flag("more", envelope.more)
        upgrade = try Self.flag("upgrade", envelope.upgrade)
        try checkFlags()
    }

    /// Decodes a message with the general parser: any envelope, and the error naming what is wrong with it.
    ///
    /// `init(bytes:)` without its fast paths: the reference they are checked against (the tests, `fuzz-wire`).
    public init(general frame: UnsafeBufferPointer<UInt8>) throws(VarlinkFramingError) {
        guard !frame.isEmpty else { throw .malformed("empty message") }
        let value: JSONValue
        do throws(JSONError) {
            value = try JSON.parse(buffer: frame)
        } catch {
            throw .malformed(error.description)
        }
        guard case .object(let object) = value else { throw .malformed("the message is not a JSON object") }
        guard case .string(let method) = object["method"] else {
            throw .malformed(object["method"] == nil ? "no 'method'" : "'method' is not a string")
        }
        // The service's own methods are valid names: one hash instead of checking the grammar per call.
        let known = SmartStackMethod(rawValue: method)
        guard known != nil || VarlinkNames.isQualifiedMethodName(method) else {
            throw .malformed("'method' is not an interface-qualified method name")
        }
        self.method = method
        self.known = known
        storedParameters = try Self.parameters(object["parameters"])
        oneway = try Self.flag("oneway", object["oneway"])
        more = try Self.flag("more", object["more"])
        upgrade = try Self.flag("upgrade", object["upgrade"])
        try checkFlags()
    }

    /// `oneway` asks for no reply and `more` for several: together they are a framing error, as systemd's sd-varlink
    /// treats them (a stream started for a oneway call sent replies the caller had refused, and the calls after it
    /// were taken as the stream's).
    private func checkFlags() throws(VarlinkFramingError) {
        if oneway, more { throw .malformed("'oneway' and 'more' exclude each other") }
    }

    private static func parameters(_ value: JSONValue?) throws(VarlinkFramingError) -> JSONObject {
        switch value {
        case nil, .null?: JSONObject()
        case .object(let parameters)?: parameters
        default: throw .malformed("'parameters' is not an object")
        }
    }

    /// The message for this call, NUL-terminated (for clients and tests).
    public func encode(into buffer: inout [UInt8]) {
        var object = JSONObject(minimumCapacity: 5)
        object["method"] = .string(method)
        if !parameters.isEmpty { object["parameters"] = .object(parameters) }
        if oneway { object["oneway"] = .bool(true) }
        if more { object["more"] = .bool(true) }
        if upgrade { object["upgrade"] = .bool(true) }
        JSON.serialize(object, into: &buffer)
        buffer.append(0)
    }

    private static func flag(_ key: String, _ value: JSONValue?) throws(VarlinkFramingError) -> Bool {
        switch value {
        case nil, .null?: false
        case .bool(let value)?: value
        default: throw .malformed("'\(key)' is not a boolean")
        }
    }
}

extension VarlinkCall {
    /// Whether `method` is an interface-qualified method name (`interface.Method`): the service closes a connection
    /// that sends another, so a client checks first.
    public static func isQualifiedMethodName(_ method: String) -> Bool { VarlinkNames.isQualifiedMethodName(method) }
}

/// The Varlink grammar's names (varlink.org "Interface Definition").
enum VarlinkNames {
    /// `interface.Method`: a valid interface name, a dot and a valid member name.
    static func isQualifiedMethodName(_ text: String) -> Bool {
        let utf8 = Array(text.utf8)
        guard let dot = utf8.lastIndex(of: UInt8(ascii: ".")) else { return false }
        return isInterfaceName(utf8[..<dot]) && isMemberName(utf8[(dot + 1)...])
    }

    /// `[A-Z][A-Za-z0-9]*`: type, method and error names.
    static func isMemberName(_ bytes: some BidirectionalCollection<UInt8>) -> Bool {
        guard let first = bytes.first, isUpper(first) else { return false }
        return bytes.allSatisfy { isAlpha($0) || isDigit($0) }
    }

    /// `[A-Za-z]([_]?[A-Za-z0-9])*`: field names and enum values.
    static func isFieldName(_ bytes: some BidirectionalCollection<UInt8>) -> Bool {
        guard let first = bytes.first, isAlpha(first), bytes.last != UInt8(ascii: "_") else { return false }
        var previousUnderscore = false
        for byte in bytes {
            if byte == UInt8(ascii: "_") {
                if previousUnderscore { return false }
                previousUnderscore = true
            } else {
                guard isAlpha(byte) || isDigit(byte) else { return false }
                previousUnderscore = false
            }
        }
        return true
    }

    /// Reverse-domain interface names: at least two dot-separated labels of letters, digits and inner `-`, the
    /// first starting with a letter. The first label is letters only, as the Python `varlink` parser requires.
    static func isInterfaceName(_ bytes: some BidirectionalCollection<UInt8>) -> Bool {
        let labels = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard labels.count >= 2, let first = labels.first, first.allSatisfy(isAlpha) else { return false }
        return labels.allSatisfy { label in
            guard let head = label.first, let tail = label.last, isAlpha(head) || isDigit(head),
                isAlpha(tail) || isDigit(tail)
            else { return false }
            return label.allSatisfy { isAlpha($0) || isDigit($0) || $0 == UInt8(ascii: "-") }
        }
    }

    static func isUpper(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") }
    static func isAlpha(_ byte: UInt8) -> Bool {
        isUpper(byte) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
    }
    static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}

/// A request decoded with its call's envelope (`VarlinkCall.decodedBox`).
final class DecodedRequest: Sendable {
    let request: SmartStackRequest
    init(_ request: SmartStackRequest) { self.request = request }
}
