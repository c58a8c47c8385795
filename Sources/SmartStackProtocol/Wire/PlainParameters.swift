#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A call's parameters when each member is a string written without escapes, as the envelope's fast path finds
/// them (`JSONParser.parseCallEnvelope`): the bytes where they lie in the message, so they are valid only while it
/// is parsed. A method that reads its parameters straight from these (`VarlinkMethodRequest.decodePlain`) is
/// decoded without building them as an object; anything else about them sends the call through the general
/// decoding, which names what is wrong.
public struct PlainParameters {
    /// The most members read this way; a call with more takes the general decoding.
    public static let capacity = 4

    private typealias Member = (key: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>)
    private var members: (Member?, Member?, Member?, Member?) = (nil, nil, nil, nil)
    /// How many members the parameters have.
    public private(set) var count = 0

    init() {}

    /// Adds a member; `false` when there are `capacity` already or one has the same key (a repeated key is an
    /// error the general decoding names).
    mutating func append(key: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) -> Bool {
        guard count < Self.capacity, self.value(key) == nil else { return false }
        let member: Member = (key, value)
        switch count {
        case 0: members.0 = member
        case 1: members.1 = member
        case 2: members.2 = member
        default: members.3 = member
        }
        count += 1
        return true
    }

    /// The value of member `key`, if there is one.
    private func value(_ key: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8>? {
        func match(_ member: Member?) -> UnsafeBufferPointer<UInt8>? {
            guard let member, bytesEqual(member.key, key) else { return nil }
            return member.value
        }
        return match(members.0) ?? match(members.1) ?? match(members.2) ?? match(members.3)
    }

    /// The value of member `key` as text when it is ASCII (other text takes the general decoding, which checks its
    /// UTF-8); `nil` when there is no such member.
    public func ascii(_ key: StaticString) -> String? {
        key.withUTF8Buffer { key in
            guard let value = value(key), value.allSatisfy({ $0 < 0x80 }) else { return nil }
            return String(decoding: value, as: UTF8.self)
        }
    }
}

/// Whether two runs of bytes are the same (`memcmp`: the generic `elementsEqual` steps through them one byte at
/// a time).
@inline(__always)
func bytesEqual(_ one: UnsafeBufferPointer<UInt8>, _ other: UnsafeBufferPointer<UInt8>) -> Bool {
    guard one.count == other.count else { return false }
    guard let a = one.baseAddress, let b = other.baseAddress else { return true }
    return memcmp(a, b, one.count) == 0
}
