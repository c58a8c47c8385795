/// Appends values to a byte buffer in the compact format storage uses: LEB128 varints, zig-zag signed
/// integers, little-endian IEEE doubles and length-prefixed UTF-8 strings.
///
/// The format has no field names or tags of its own; each type writes its fields in a fixed order and a
/// leading version or case byte where it has variants. ``ByteReader`` reads the same layout back.
public struct ByteWriter: Sendable {
    /// What was written so far.
    public private(set) var bytes: [UInt8]

    /// An empty writer that reserves `capacity` bytes.
    public init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Forgets what was written, keeping the buffer's capacity.
    public mutating func reset() { bytes.removeAll(keepingCapacity: true) }

    /// One byte.
    public mutating func byte(_ value: UInt8) { bytes.append(value) }

    /// An unsigned integer as a LEB128 varint (1 byte below 128).
    public mutating func uint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    /// A signed integer, zig-zag encoded so small magnitudes of either sign stay short.
    public mutating func int(_ value: Int64) {
        uint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    /// A count or index (non-negative).
    public mutating func count(_ value: Int) { uint(UInt64(max(0, value))) }

    /// A double by its exact bit pattern (8 bytes, little-endian), so every value round-trips.
    public mutating func double(_ value: Double) {
        var bits = value.bitPattern
        for _ in 0..<8 {
            bytes.append(UInt8(truncatingIfNeeded: bits))
            bits >>= 8
        }
    }

    /// A boolean as one byte.
    public mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }

    /// A string as its UTF-8 length and bytes.
    public mutating func string(_ value: String) {
        var text = value
        text.withUTF8 { utf8 in
            count(utf8.count)
            bytes.append(contentsOf: utf8)
        }
    }

    /// Raw bytes with their length in front.
    public mutating func data(_ value: [UInt8]) {
        count(value.count)
        bytes.append(contentsOf: value)
    }

    /// An optional: a presence byte, then the value.
    public mutating func optional<T>(_ value: T?, _ write: (inout ByteWriter, T) -> Void) {
        guard let value else { return byte(0) }
        byte(1)
        write(&self, value)
    }

    /// An array: its count, then each element.
    public mutating func array<T>(_ values: [T], _ write: (inout ByteWriter, T) -> Void) {
        count(values.count)
        for value in values { write(&self, value) }
    }

    /// A string dictionary, sorted by key so equal dictionaries give equal bytes.
    public mutating func strings(_ values: [String: String]) {
        count(values.count)
        for key in values.keys.sorted() {
            string(key)
            string(values[key] ?? "")
        }
    }
}
