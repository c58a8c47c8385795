/// Writes compact JSON text into a byte buffer.
///
/// One pass computes an upper bound of the text's size (`bound`), the buffer grows once to hold that much (into
/// uninitialized memory when it has to reallocate), and a second pass writes through a raw pointer with no
/// per-byte capacity or uniqueness checks; the unused tail is then dropped. Every write is still checked against
/// the bound, so a wrong bound traps instead of writing out of range. Doubles are formatted by the standard
/// library's shortest round-trip algorithm straight into the output, without an intermediate `String`.
enum JSONWriter {
    static func write(_ value: JSONValue, into buffer: inout [UInt8]) {
        withOutput(bound: bound(value), into: &buffer) { $0.write(value) }
    }

    static func write(_ object: JSONObject, into buffer: inout [UInt8]) {
        withOutput(bound: bound(object), into: &buffer) { $0.write(object) }
    }

    static func write(_ text: String, into buffer: inout [UInt8]) {
        withOutput(bound: bound(text), into: &buffer) { $0.writeString(text) }
    }

    static func append(_ text: StaticString, to buffer: inout [UInt8]) {
        text.withUTF8Buffer { buffer.append(contentsOf: $0) }
    }

    /// The largest bound `withOutput` writes on the stack (a temporary allocation this small stays on the stack).
    static let smallBound = 1024

    static func withOutput(bound: Int, into buffer: inout [UInt8], _ body: (inout RawOutput) -> Void) {
        let start = buffer.count
        guard buffer.capacity - start >= bound else {
            // The buffer must grow, which allocates anyway: a new array holding what the buffer held, the text
            // written straight into its uninitialized tail. Growing by `bound` zeros first cost a store per byte
            // of a bound that is up to six times the text (a long string is bounded as if every byte were
            // escaped): 32 % of fuzz-dispatch's time, encoding interface descriptions.
            buffer = [UInt8](unsafeUninitializedCapacity: start + bound) { all, count in
                count = 0
                guard let base = all.baseAddress else { return }
                buffer.withUnsafeBufferPointer { held in
                    if let source = held.baseAddress { base.initialize(from: source, count: start) }
                }
                var output = RawOutput(base: base + start, capacity: bound)
                body(&output)
                count = start + output.count
            }
            return
        }
        // Room enough (a reused scratch buffer). A small text is written on the stack and appended: filling the
        // bound with zeros first and dropping what is unused cost more than the writing (a donation's reply, whose
        // id is bounded at six bytes for each of its own).
        if bound <= smallBound {
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bound) { scratch in
                guard let base = scratch.baseAddress else { return }
                var output = RawOutput(base: base, capacity: bound)
                body(&output)
                buffer.append(contentsOf: UnsafeBufferPointer(start: base, count: output.count))
            }
            return
        }
        // Else the bound's bytes are made part of the buffer, written, and the unused tail dropped.
        buffer.append(contentsOf: repeatElement(0, count: bound))
        let written = buffer.withUnsafeMutableBufferPointer { all -> Int in
            guard let base = all.baseAddress else { return 0 }
            var output = RawOutput(base: base + start, capacity: bound)
            body(&output)
            return output.count
        }
        buffer.removeLast(bound - written)
    }

    // MARK: Size bounds

    /// The longest text `Double.description` gives (`-2.2250738585072014e-308`), with room to spare.
    static let doubleBound = 32

    static func bound(_ value: JSONValue) -> Int {
        switch value {
        case .null, .bool: 5
        case .int: 20
        case .double: doubleBound
        case .string(let text): bound(text)
        case .array(let elements):
            elements.reduce(2 + elements.count) { $0 + bound($1) }
        case .object(let object): bound(object)
        }
    }

    static func bound(_ object: JSONObject) -> Int {
        object.reduce(2) { $0 + bound($1.key) + bound($1.value) + 2 }
    }

    /// Quotes plus at most six bytes (`\u00XX`) per byte of text.
    static func bound(_ text: String) -> Int { 2 + 6 * text.utf8.count }
}

/// A write cursor over memory the writer has sized with `JSONWriter.bound`.
struct RawOutput: TextOutputStream {
    let base: UnsafeMutablePointer<UInt8>
    let capacity: Int
    private(set) var count = 0

    init(base: UnsafeMutablePointer<UInt8>, capacity: Int) {
        self.base = base
        self.capacity = capacity
    }

    mutating func byte(_ byte: UInt8) {
        precondition(count < capacity, "JSON size bound exceeded")
        base[count] = byte
        count += 1
    }

    mutating func bytes(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        precondition(count + bytes.count <= capacity, "JSON size bound exceeded")
        (base + count).update(from: source, count: bytes.count)
        count += bytes.count
    }

    mutating func literal(_ text: StaticString) {
        text.withUTF8Buffer { bytes($0) }
    }

    // TextOutputStream, for `Double.write(to:)`: the standard library hands its digits to `_writeASCII`
    // from a stack buffer; `write(_:)` is the fallback if it ever passes a `String` instead.
    mutating func write(_ string: String) {
        var string = string
        string.withUTF8 { bytes($0) }
    }

    mutating func _writeASCII(_ buffer: UnsafeBufferPointer<UInt8>) { bytes(buffer) }

    // MARK: Values

    mutating func write(_ value: JSONValue) {
        switch value {
        case .null: literal("null")
        case .bool(let flag): flag ? literal("true") : literal("false")
        case .int(let number): write(number)
        case .double(let number): write(number)
        case .string(let text): writeString(text)
        case .array(let elements):
            byte(Byte.openBracket)
            var first = true
            for element in elements {
                if !first { byte(Byte.comma) }
                first = false
                write(element)
            }
            byte(Byte.closeBracket)
        case .object(let object): write(object)
        }
    }

    mutating func write(_ object: JSONObject) {
        byte(Byte.openBrace)
        var first = true
        for (key, value) in object {
            if !first { byte(Byte.comma) }
            first = false
            writeString(key)
            byte(Byte.colon)
            write(value)
        }
        byte(Byte.closeBrace)
    }

    mutating func write(_ number: Int64) {
        var magnitude = number.magnitude
        var digits = 1
        var scale: UInt64 = 10
        while digits < 20, magnitude >= scale {
            digits += 1
            scale = scale &* 10
        }
        precondition(count + digits + 1 <= capacity, "JSON size bound exceeded")
        if number < 0 { byte(Byte.minus) }
        var index = count + digits
        repeat {
            index -= 1
            base[index] = Byte.zero + UInt8(magnitude % 10)
            magnitude /= 10
        } while magnitude > 0
        count += digits
    }

    /// The shortest text that reads back as the same `Double` (`0.1`, `5.0`, `1e-07`); `null` when not finite,
    /// which JSON cannot express.
    mutating func write(_ number: Double) {
        guard number.isFinite else {
            literal("null")
            return
        }
        number.write(to: &self)
    }

    /// A JSON string: quoted, with `"`, `\\` and control characters escaped.
    mutating func writeString(_ text: String) {
        byte(Byte.quote)
        let done: Void? = text.utf8.withContiguousStorageIfAvailable { writeEscaped($0) }
        if done == nil {
            var copy = text
            copy.withUTF8 { writeEscaped($0) }
        }
        byte(Byte.quote)
    }

    private static let hexDigits: StaticString = "0123456789abcdef"

    private mutating func writeEscaped(_ text: UnsafeBufferPointer<UInt8>) {
        var runStart = 0
        for index in 0..<text.count {
            let current = text[index]
            guard current < 0x20 || current == Byte.quote || current == Byte.backslash else { continue }
            if runStart < index { bytes(UnsafeBufferPointer(rebasing: text[runStart..<index])) }
            byte(Byte.backslash)
            switch current {
            case Byte.quote: byte(Byte.quote)
            case Byte.backslash: byte(Byte.backslash)
            case 0x0A: byte(Byte.n)
            case 0x0D: byte(Byte.r)
            case 0x09: byte(Byte.t)
            case 0x08: byte(Byte.b)
            case 0x0C: byte(Byte.f)
            default:
                literal("u00")
                Self.hexDigits.withUTF8Buffer { hex in
                    byte(hex[Int(current >> 4)])
                    byte(hex[Int(current & 0x0F)])
                }
            }
            runStart = index + 1
        }
        if runStart < text.count { bytes(UnsafeBufferPointer(rebasing: text[runStart...])) }
    }
}
