#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why stored bytes could not be read back: truncated, or a value no writer produces.
public struct CodecError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong, and where in the buffer.
    public var reason: String

    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

/// Reads what ``ByteWriter`` wrote, checking bounds on every read (a truncated or damaged buffer is a
/// ``CodecError``, never a crash).
public struct ByteReader: ~Copyable {
    private let base: UnsafeRawBufferPointer
    /// The offset of the next byte to read.
    public private(set) var offset = 0
    /// App ids read recently: a stored log repeats a few apps, so most are matched by their bytes and reused
    /// without building and checking a string again.
    var recentApps: [AppID] = []

    /// A reader over `buffer`, which must stay valid while the reader is used.
    public init(_ buffer: UnsafeRawBufferPointer) { base = buffer }

    /// Whether every byte was read.
    public var isAtEnd: Bool { offset == base.count }

    /// Throws unless every byte was read (a longer buffer than its type writes is damaged).
    public func expectEnd() throws(CodecError) {
        guard isAtEnd else { throw CodecError("\(base.count - offset) unexpected bytes at offset \(offset)") }
    }

    /// One byte.
    public mutating func byte() throws(CodecError) -> UInt8 {
        guard offset < base.count else { throw CodecError("truncated at offset \(offset)") }
        defer { offset += 1 }
        return base[offset]
    }

    /// A LEB128 varint.
    public mutating func uint() throws(CodecError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let next = try byte()
            guard shift < 64 else { throw CodecError("varint too long at offset \(offset)") }
            result |= UInt64(next & 0x7F) << shift
            if next & 0x80 == 0 { return result }
            shift += 7
        }
    }

    /// A zig-zag signed integer.
    public mutating func int() throws(CodecError) -> Int64 {
        let raw = try uint()
        return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    /// A count, at most `limit` (so a damaged length cannot make a reader allocate without bound).
    public mutating func count(limit: Int = 1 << 30) throws(CodecError) -> Int {
        let raw = try uint()
        guard raw <= UInt64(limit) else { throw CodecError("count \(raw) over \(limit) at offset \(offset)") }
        return Int(raw)
    }

    /// Room for `count` elements of `T` about to be read: all of them (an array filled one append at a time doubles
    /// its room and can keep half of it empty: restoring 1,000 stacks' snapshot kept megabytes that way), unless
    /// that room would be more than four times the bytes left, which no stored value needs: a damaged count then
    /// fails at the end of the bytes, as before, without reserving gigabytes first.
    public func capacity<T>(for count: Int, of type: T.Type) -> Int {
        count <= (base.count - offset) &* 4 / max(1, MemoryLayout<T>.stride) ? count : 0
    }

    /// A count, then that many elements, each read by `element`, in an array with room for exactly them.
    public mutating func array<T>(
        limit: Int = 1 << 30, _ element: (inout ByteReader) throws(CodecError) -> T
    ) throws(CodecError) -> [T] {
        let count = try count(limit: limit)
        var result: [T] = []
        result.reserveCapacity(capacity(for: count, of: T.self))
        for _ in 0..<count { result.append(try element(&self)) }
        return result
    }

    /// A 32-bit signed integer.
    public mutating func int32() throws(CodecError) -> Int32 {
        let value = try int()
        guard let narrow = Int32(exactly: value) else { throw CodecError("\(value) out of range at offset \(offset)") }
        return narrow
    }

    /// A platform integer.
    public mutating func integer() throws(CodecError) -> Int {
        let value = try int()
        guard let narrow = Int(exactly: value) else { throw CodecError("\(value) out of range at offset \(offset)") }
        return narrow
    }

    /// A double from its bit pattern. NaN is refused: no writer stores one (every stored number comes from
    /// validated input or the engine's arithmetic on it), and a NaN read back would equal nothing, not even itself.
    public mutating func double() throws(CodecError) -> Double {
        guard base.count - offset >= 8 else { throw CodecError("truncated double at offset \(offset)") }
        var bits: UInt64 = 0
        for index in 0..<8 { bits |= UInt64(base[offset + index]) << (8 * UInt64(index)) }
        let value = Double(bitPattern: bits)
        guard !value.isNaN else { throw CodecError("not a number at offset \(offset)") }
        offset += 8
        return value
    }

    /// A boolean (0 or 1).
    public mutating func bool() throws(CodecError) -> Bool {
        switch try byte() {
        case 0: return false
        case 1: return true
        case let other: throw CodecError("bad boolean \(other) at offset \(offset - 1)")
        }
    }

    /// A length that the rest of the buffer holds.
    private mutating func length() throws(CodecError) -> Int {
        let raw = try uint()
        guard raw <= UInt64(base.count - offset) else {
            throw CodecError("length \(raw) past the end at offset \(offset)")
        }
        return Int(raw)
    }

    /// A length-prefixed UTF-8 string (invalid UTF-8 is repaired, as `String(decoding:as:)` does).
    public mutating func string() throws(CodecError) -> String {
        let length = try length()
        defer { offset += length }
        return String(decoding: UnsafeRawBufferPointer(rebasing: base[offset..<offset + length]), as: UTF8.self)
    }

    /// A length-prefixed string when its bytes equal one of `candidates`' (which is returned, nothing built);
    /// otherwise nil and nothing is consumed.
    mutating func matching(_ candidates: [AppID]) throws(CodecError) -> AppID? {
        let start = offset
        let length = try length()
        guard length > 0, let bytes = base.baseAddress.map({ $0 + offset }) else {
            offset = start
            return nil
        }
        for candidate in candidates where candidate.rawValue.utf8.count == length {
            var text = candidate.rawValue
            let equal = text.withUTF8 { utf8 in utf8.baseAddress.map { memcmp($0, bytes, length) == 0 } ?? false }
            if equal {
                offset += length
                return candidate
            }
        }
        offset = start
        return nil
    }

    /// Length-prefixed raw bytes.
    public mutating func data() throws(CodecError) -> [UInt8] {
        let length = try length()
        defer { offset += length }
        return Array(base[offset..<offset + length])
    }

    /// Whether an optional value follows (its presence byte).
    public mutating func present() throws(CodecError) -> Bool { try bool() }

    /// A string dictionary as ``ByteWriter/strings(_:)`` wrote it.
    public mutating func strings() throws(CodecError) -> [String: String] {
        let count = try count(limit: base.count - offset)
        // Most are empty: an empty literal allocates nothing (reserving capacity would).
        guard count > 0 else { return [:] }
        var result: [String: String] = [:]
        result.reserveCapacity(count)
        for _ in 0..<count {
            let key = try string()
            result[key] = try string()
        }
        return result
    }
}
