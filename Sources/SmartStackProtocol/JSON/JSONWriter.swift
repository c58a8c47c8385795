/// Writes compact JSON text into a byte buffer: no intermediate strings, unescaped runs copied whole.
enum JSONWriter {
    static func write(_ value: JSONValue, into buffer: inout [UInt8]) {
        switch value {
        case .null: append("null", to: &buffer)
        case .bool(let flag): append(flag ? "true" : "false", to: &buffer)
        case .int(let number): write(number, into: &buffer)
        case .double(let number): write(number, into: &buffer)
        case .string(let text): write(text, into: &buffer)
        case .array(let elements):
            buffer.append(Byte.openBracket)
            var first = true
            for element in elements {
                if !first { buffer.append(Byte.comma) }
                first = false
                write(element, into: &buffer)
            }
            buffer.append(Byte.closeBracket)
        case .object(let object): write(object, into: &buffer)
        }
    }

    static func write(_ object: JSONObject, into buffer: inout [UInt8]) {
        buffer.append(Byte.openBrace)
        var first = true
        for (key, value) in object {
            if !first { buffer.append(Byte.comma) }
            first = false
            write(key, into: &buffer)
            buffer.append(Byte.colon)
            write(value, into: &buffer)
        }
        buffer.append(Byte.closeBrace)
    }

    static func append(_ text: StaticString, to buffer: inout [UInt8]) {
        text.withUTF8Buffer { buffer.append(contentsOf: $0) }
    }

    static func write(_ number: Int64, into buffer: inout [UInt8]) {
        if number < 0 { buffer.append(Byte.minus) }
        var magnitude = number.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = 20
            repeat {
                start -= 1
                digits[start] = Byte.zero + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start..<20]))
        }
    }

    /// The shortest text that reads back as the same `Double` (`0.1`, `5.0`, `1e-07`); `null` when not finite.
    static func write(_ number: Double, into buffer: inout [UInt8]) {
        guard number.isFinite else {
            append("null", to: &buffer)
            return
        }
        buffer.append(contentsOf: number.description.utf8)
    }

    static func write(_ text: String, into buffer: inout [UInt8]) {
        buffer.append(Byte.quote)
        var text = text
        text.withUTF8 { writeEscaped($0, into: &buffer) }
        buffer.append(Byte.quote)
    }

    private static let hexDigits: StaticString = "0123456789abcdef"

    private static func writeEscaped(_ bytes: UnsafeBufferPointer<UInt8>, into buffer: inout [UInt8]) {
        var runStart = 0
        for index in 0..<bytes.count {
            let byte = bytes[index]
            guard byte < 0x20 || byte == Byte.quote || byte == Byte.backslash else { continue }
            if runStart < index { buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index])) }
            buffer.append(Byte.backslash)
            switch byte {
            case Byte.quote: buffer.append(Byte.quote)
            case Byte.backslash: buffer.append(Byte.backslash)
            case 0x0A: buffer.append(Byte.n)
            case 0x0D: buffer.append(Byte.r)
            case 0x09: buffer.append(Byte.t)
            case 0x08: buffer.append(Byte.b)
            case 0x0C: buffer.append(Byte.f)
            default:
                append("u00", to: &buffer)
                hexDigits.withUTF8Buffer { hex in
                    buffer.append(hex[Int(byte >> 4)])
                    buffer.append(hex[Int(byte & 0x0F)])
                }
            }
            runStart = index + 1
        }
        if runStart < bytes.count { buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...])) }
    }
}
