/// A call's envelope as `parseCallEnvelope` read it: the method already matched to the service's own, the rest as
/// JSON values the general checks then read.
struct CallEnvelope {
    var method: SmartStackMethod
    var parameters: JSONValue?
    /// The request, when the method read it straight from plain parameters (`VarlinkMethodRequest.decodePlain`);
    /// `parameters` is then `nil`. Boxed, as the call keeps it: the envelope is copied on its way.
    var request: DecodedRequest?
    var oneway: JSONValue?
    var more: JSONValue?
    var upgrade: JSONValue?
}

extension JSONParser {
    /// Reads the usual call straight from its bytes: an object of at most `method` (one of the service's own methods,
    /// written without escapes), `parameters` (an object or `null`) and the three flags (`true`, `false` or `null`),
    /// each once. The method comes back as the service's method, so the call holds its name without allocating or
    /// hashing it; the members are never gathered into an object.
    ///
    /// `nil` for anything else (another method, an unknown member, a repeated one, an escape in a key, invalid
    /// JSON): the general parser then reads the message and names what is wrong, so errors are the same either way.
    mutating func parseCallEnvelope() -> CallEnvelope? {
        do throws(JSONError) {
            return try envelope()
        } catch {
            return nil
        }
    }

    private mutating func envelope() throws(JSONError) -> CallEnvelope? {
        skipWhitespace()
        guard peek() == Byte.openBrace else { return nil }
        try enterContainer()
        position += 1
        var method: SmartStackMethod?
        var parameters: JSONValue?
        var request: DecodedRequest?
        var oneway: JSONValue?
        var more: JSONValue?
        var upgrade: JSONValue?
        skipWhitespace()
        guard peek() != Byte.closeBrace else { return nil }
        while true {
            guard let key = plainKey() else { return nil }
            switch EnvelopeKey(key) {
            case .method?:
                guard method == nil, let name = plainString(), let known = SmartStackMethod(utf8: name) else {
                    return nil
                }
                method = known
            case .parameters?:
                guard parameters == nil, request == nil, peek() == Byte.openBrace || peek() == Byte.n else {
                    return nil
                }
                // A method that reads plain parameters itself, named before them (as clients write calls).
                if let method, method.requestType.takesPlainParameters {
                    let (start, startDepth) = (position, depth)
                    if let plain = plainParameters(), let decoded = method.requestType.decodePlain(plain) {
                        request = DecodedRequest(decoded)
                        break
                    }
                    (position, depth) = (start, startDepth)
                }
                parameters = try parseValue()
            case .oneway?:
                guard oneway == nil, let flag = try flag() else { return nil }
                oneway = flag
            case .more?:
                guard more == nil, let flag = try flag() else { return nil }
                more = flag
            case .upgrade?:
                guard upgrade == nil, let flag = try flag() else { return nil }
                upgrade = flag
            case nil:
                return nil
            }
            switch stepAfterMember() {
            case .next:
                continue
            case .end:
                skipWhitespace()
                guard position == bytes.count, let method else { return nil }
                return CallEnvelope(
                    method: method, parameters: parameters, request: request, oneway: oneway, more: more,
                    upgrade: upgrade)
            case .invalid:
                return nil
            }
        }
    }

    /// The object at `position` when each of its members is a plain string (`plainString`), at most
    /// `PlainParameters.capacity` of them with no key twice, moving past it; `nil` for anything else, the position
    /// and depth then wherever it stopped (the caller goes back to where it started).
    private mutating func plainParameters() -> PlainParameters? {
        guard peek() == Byte.openBrace, (try? enterContainer()) != nil else { return nil }
        position += 1
        var members = PlainParameters()
        skipWhitespace()
        if peek() == Byte.closeBrace {
            position += 1
            depth -= 1
            return members
        }
        while true {
            guard let key = plainKey(), let value = plainString(), members.append(key: key, value: value) else {
                return nil
            }
            switch stepAfterMember() {
            case .next: continue
            case .end: return members
            case .invalid: return nil
            }
        }
    }

    /// A member's key written as a plain string, and its colon, moving to its value; `nil` for anything else.
    private mutating func plainKey() -> UnsafeBufferPointer<UInt8>? {
        skipWhitespace()
        guard let key = plainString() else { return nil }
        skipWhitespace()
        guard peek() == Byte.colon else { return nil }
        position += 1
        skipWhitespace()
        return key
    }

    /// A flag's value: `true`, `false` or `null`; `nil` for any other value.
    private mutating func flag() throws(JSONError) -> JSONValue? {
        guard peek() == Byte.t || peek() == Byte.f || peek() == Byte.n else { return nil }
        return try parseValue()
    }

    /// The bytes of the string at `position` when it has no escapes and no control characters, moving past it.
    private mutating func plainString() -> UnsafeBufferPointer<UInt8>? {
        guard peek() == Byte.quote else { return nil }
        let start = position + 1
        var index = start
        while index < bytes.count {
            let byte = bytes[index]
            if byte == Byte.quote {
                position = index + 1
                return UnsafeBufferPointer(rebasing: bytes[start..<index])
            }
            if byte == Byte.backslash || byte < 0x20 { return nil }
            index += 1
        }
        return nil
    }
}

/// The members of a call's envelope.
private enum EnvelopeKey {
    case method
    case parameters
    case oneway
    case more
    case upgrade

    init?(_ key: UnsafeBufferPointer<UInt8>) {
        if Self.equal(key, "method") {
            self = .method
        } else if Self.equal(key, "parameters") {
            self = .parameters
        } else if Self.equal(key, "oneway") {
            self = .oneway
        } else if Self.equal(key, "more") {
            self = .more
        } else if Self.equal(key, "upgrade") {
            self = .upgrade
        } else {
            return nil
        }
    }

    static func equal(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        guard bytes.count == literal.utf8CodeUnitCount else { return false }
        return literal.withUTF8Buffer { expected in bytesEqual(bytes, expected) }
    }
}

extension SmartStackMethod {
    /// Every method's name as bytes, with the method, its length and its last eight bytes as one number:
    /// `init(utf8:)` compares a name's bytes only with a name of the same length and the same last eight bytes
    /// (names of one interface share their prefix and differ at the end). It compared every name of the same
    /// length byte by byte from the start, through the `io.smartstack.` they share: a tenth of decoding a
    /// `GetStack` call.
    private static let names: [(count: Int, tail: UInt64, utf8: [UInt8], method: SmartStackMethod)] = allCases.map {
        let bytes = Array($0.rawValue.utf8)
        return (bytes.count, bytes.withUnsafeBufferPointer { tail(of: $0) }, bytes, $0)
    }

    /// The last eight bytes of `bytes` as one number (the bytes themselves, zero-extended, when fewer).
    @inline(__always)
    private static func tail(of bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        guard let base = bytes.baseAddress else { return 0 }
        if bytes.count >= 8 {
            return UnsafeRawPointer(base).loadUnaligned(fromByteOffset: bytes.count - 8, as: UInt64.self)
        }
        var value: UInt64 = 0
        for byte in bytes { value = value << 8 | UInt64(byte) }
        return value
    }

    /// The method this name, as bytes, names; `nil` when it is none of the service's.
    init?(utf8 name: UnsafeBufferPointer<UInt8>) {
        let tail = Self.tail(of: name)
        for entry in Self.names where entry.count == name.count && entry.tail == tail {
            if entry.utf8.withUnsafeBufferPointer({ bytesEqual($0, name) }) {
                self = entry.method
                return
            }
        }
        return nil
    }
}
