/// One Varlink reply: parameters (possibly one of a stream) or an error.
public struct VarlinkReply: Sendable {
    /// The reply's parameters; for an error, the error's parameters.
    public var parameters: JSONObject
    /// More replies to the same call follow (only for calls with `more`).
    public var continues: Bool
    /// The error, for an error reply.
    public var error: VarlinkError?

    /// A successful reply; `continues` when more replies to the same call follow.
    public init(parameters: JSONObject = [:], continues: Bool = false) {
        self.parameters = parameters
        self.continues = continues
        self.error = nil
    }

    /// An error reply.
    public init(error: VarlinkError) {
        self.parameters = error.parameters
        self.continues = false
        self.error = error
    }

    /// Appends the message, NUL-terminated: `{"parameters":{…}}`, `{"parameters":{…},"continues":true}` or
    /// `{"error":"NAME","parameters":{…}}`. `parameters` is always present; `continues` only when true.
    public func encode(into buffer: inout [UInt8]) {
        if let error {
            JSONWriter.append(#"{"error":"#, to: &buffer)
            JSONWriter.write(error.name, into: &buffer)
            JSONWriter.append(#","parameters":"#, to: &buffer)
        } else {
            JSONWriter.append(#"{"parameters":"#, to: &buffer)
        }
        JSONWriter.write(parameters, into: &buffer)
        if continues, error == nil { JSONWriter.append(#","continues":true"#, to: &buffer) }
        buffer.append(Byte.closeBrace)
        buffer.append(0)
    }

    /// Appends a successful reply whose parameters are already serialized JSON object text, NUL-terminated.
    ///
    /// For sending one encoded value many times: a published decision is encoded once
    /// (`Decision.encodeWireObject(into:)`) and framed for each subscriber. `parameters` must be a JSON object.
    public static func encode(
        serializedParameters parameters: some Collection<UInt8>, continues: Bool = false, into buffer: inout [UInt8]
    ) {
        JSONWriter.append(#"{"parameters":"#, to: &buffer)
        buffer.append(contentsOf: parameters)
        if continues { JSONWriter.append(#","continues":true"#, to: &buffer) }
        buffer.append(Byte.closeBrace)
        buffer.append(0)
    }

    /// The message as a new buffer, NUL-terminated.
    public var encoded: [UInt8] {
        var buffer: [UInt8] = []
        encode(into: &buffer)
        return buffer
    }

    /// Decodes a reply message (without its NUL), for clients and tests.
    public init(frame: [UInt8]) throws(VarlinkFramingError) {
        let value: JSONValue
        do throws(JSONError) {
            value = try JSON.parse(frame)
        } catch {
            throw .malformed(error.description)
        }
        guard case .object(let object) = value else { throw .malformed("the reply is not a JSON object") }
        var parameters = JSONObject()
        switch object["parameters"] {
        case nil, .null?: break
        case .object(let given)?: parameters = given
        default: throw .malformed("'parameters' is not an object")
        }
        var continues = false
        switch object["continues"] {
        case nil, .null?: break
        case .bool(let flag)?: continues = flag
        default: throw .malformed("'continues' is not a boolean")
        }
        switch object["error"] {
        case nil, .null?:
            self.init(parameters: parameters, continues: continues)
        case .string(let name)?:
            self.init(error: VarlinkError(name: name, parameters: parameters))
        default:
            throw .malformed("'error' is not a string")
        }
    }
}

/// The reply of `org.varlink.service.GetInfo`.
public struct VarlinkServiceInfo: Sendable, Hashable {
    public var vendor: String
    public var product: String
    public var version: String
    public var url: String
    /// Every interface the service implements, `org.varlink.service` included.
    public var interfaces: [String]

    public init(vendor: String, product: String, version: String, url: String, interfaces: [String]) {
        self.vendor = vendor
        self.product = product
        self.version = version
        self.url = url
        self.interfaces = interfaces
    }

    /// `{vendor, product, version, url, interfaces}`.
    public var wireObject: JSONObject {
        [
            "vendor": .string(vendor), "product": .string(product), "version": .string(version),
            "url": .string(url), "interfaces": .array(interfaces.map(JSONValue.string)),
        ]
    }
}
