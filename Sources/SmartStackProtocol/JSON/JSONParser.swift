/// A recursive-descent JSON parser over a byte buffer.
///
/// Strings without escapes become a `String` in one step (ASCII needs no validation, anything else is
/// validated once); escapes are decoded into a scratch buffer reused across the document.
struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    private let maxDepth: Int
    var position = 0
    var depth = 0
    private var scratch: [UInt8] = []

    init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    mutating func parseDocument() throws(JSONError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        guard position == bytes.count else { throw fail("unexpected text after the value") }
        return value
    }

    // MARK: Values

    mutating func parseValue() throws(JSONError) -> JSONValue {
        guard position < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[position] {
        case Byte.openBrace: return try parseObject()
        case Byte.openBracket: return try parseArray()
        case Byte.quote: return .string(try parseString())
        case Byte.t:
            try expectLiteral("true")
            return .bool(true)
        case Byte.f:
            try expectLiteral("false")
            return .bool(false)
        case Byte.n:
            try expectLiteral("null")
            return .null
        case Byte.minus, Byte.zero...Byte.nine:
            return try parseNumber()
        default:
            throw fail("unexpected character '\(Self.describe(bytes[position]))'")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONError) {
        let count = literal.utf8CodeUnitCount
        guard position + count <= bytes.count else { throw fail("invalid literal") }
        let matches = literal.withUTF8Buffer { expected in
            (0..<count).allSatisfy { bytes[position + $0] == expected[$0] }
        }
        guard matches else { throw fail("invalid literal") }
        position += count
    }

    mutating func enterContainer() throws(JSONError) {
        depth += 1
        guard depth <= maxDepth else { throw fail("nested deeper than \(maxDepth) levels") }
    }

    private mutating func parseObject() throws(JSONError) -> JSONValue {
        try enterContainer()
        position += 1
        skipWhitespace()
        if peek() == Byte.closeBrace {
            position += 1
            depth -= 1
            return .object(JSONObject())
        }
        // Room for a call's envelope or parameters at once (growing from one member reallocates twice).
        var object = JSONObject(minimumCapacity: 4)
        while true {
            skipWhitespace()
            guard peek() == Byte.quote else { throw fail("expected a string key") }
            let keyOffset = position
            let key = try parseString()
            skipWhitespace()
            guard peek() == Byte.colon else { throw fail("expected ':' after a key") }
            position += 1
            skipWhitespace()
            let value = try parseValue()
            guard object.insertNew(key, value) else {
                throw JSONError(offset: keyOffset, reason: "duplicate key '\(key)'")
            }
            switch stepAfterMember() {
            case .next: continue
            case .end: return .object(object)
            case .invalid: throw fail("expected ',' or '}' in an object")
            }
        }
    }

    /// What follows an object's member.
    enum MemberStep {
        /// A comma (consumed): another member comes.
        case next
        /// The closing brace (consumed): the object ended.
        case end
        /// Anything else (not consumed).
        case invalid
    }

    /// Reads past what follows an object's member: a comma, or the closing brace that ends the object.
    mutating func stepAfterMember() -> MemberStep {
        skipWhitespace()
        switch peek() {
        case Byte.comma:
            position += 1
            return .next
        case Byte.closeBrace:
            position += 1
            depth -= 1
            return .end
        default:
            return .invalid
        }
    }

    private mutating func parseArray() throws(JSONError) -> JSONValue {
        try enterContainer()
        position += 1
        var array: [JSONValue] = []
        skipWhitespace()
        if peek() == Byte.closeBracket {
            position += 1
            depth -= 1
            return .array(array)
        }
        while true {
            skipWhitespace()
            array.append(try parseValue())
            skipWhitespace()
            switch peek() {
            case Byte.comma:
                position += 1
            case Byte.closeBracket:
                position += 1
                depth -= 1
                return .array(array)
            default:
                throw fail("expected ',' or ']' in an array")
            }
        }
    }

    // MARK: Strings

    /// Parses a string starting at its opening quote.
    private mutating func parseString() throws(JSONError) -> String {
        let opening = position
        let start = position + 1
        var index = start
        var highBits: UInt8 = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == Byte.quote {
                position = index + 1
                let content = UnsafeBufferPointer(rebasing: bytes[start..<index])
                if highBits & 0x80 == 0 { return String(decoding: content, as: UTF8.self) }
                guard let text = String(validating: content, as: UTF8.self) else {
                    throw JSONError(offset: opening, reason: "invalid UTF-8 in a string")
                }
                return text
            }
            if byte == Byte.backslash { return try parseEscapedString(opening: opening, escape: index) }
            if byte < 0x20 {
                throw JSONError(offset: index, reason: "unescaped control character in a string")
            }
            highBits |= byte
            index += 1
        }
        throw JSONError(offset: opening, reason: "unterminated string")
    }

    /// The slow path of `parseString`: from the first backslash on, decode into `scratch`.
    private mutating func parseEscapedString(opening: Int, escape: Int) throws(JSONError) -> String {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[(opening + 1)..<escape]))
        var index = escape
        while index < bytes.count {
            let byte = bytes[index]
            if byte == Byte.quote {
                position = index + 1
                guard let text = String(validating: scratch, as: UTF8.self) else {
                    throw JSONError(offset: opening, reason: "invalid UTF-8 in a string")
                }
                return text
            }
            if byte < 0x20 {
                throw JSONError(offset: index, reason: "unescaped control character in a string")
            }
            guard byte == Byte.backslash else {
                scratch.append(byte)
                index += 1
                continue
            }
            guard index + 1 < bytes.count else { break }
            switch bytes[index + 1] {
            case Byte.quote: scratch.append(Byte.quote)
            case Byte.backslash: scratch.append(Byte.backslash)
            case Byte.slash: scratch.append(Byte.slash)
            case Byte.b: scratch.append(0x08)
            case Byte.f: scratch.append(0x0C)
            case Byte.n: scratch.append(0x0A)
            case Byte.r: scratch.append(0x0D)
            case Byte.t: scratch.append(0x09)
            case Byte.u:
                index = try parseUnicodeEscape(at: index)
                continue
            default:
                throw JSONError(offset: index, reason: "invalid escape '\\\(Self.describe(bytes[index + 1]))'")
            }
            index += 2
        }
        throw JSONError(offset: opening, reason: "unterminated string")
    }

    /// Decodes `\uXXXX` (and its low surrogate, for a high one) at `index` into `scratch`; returns the index after.
    private mutating func parseUnicodeEscape(at index: Int) throws(JSONError) -> Int {
        let first = try hexQuad(at: index + 2)
        var scalarValue = UInt32(first)
        var next = index + 6
        switch first {
        case 0xD800...0xDBFF:
            guard next + 1 < bytes.count, bytes[next] == Byte.backslash, bytes[next + 1] == Byte.u else {
                throw JSONError(offset: index, reason: "unpaired high surrogate")
            }
            let second = try hexQuad(at: next + 2)
            guard (0xDC00...0xDFFF).contains(second) else {
                throw JSONError(offset: index, reason: "unpaired high surrogate")
            }
            scalarValue = 0x10000 + ((UInt32(first) - 0xD800) << 10) + (UInt32(second) - 0xDC00)
            next += 6
        case 0xDC00...0xDFFF:
            throw JSONError(offset: index, reason: "unpaired low surrogate")
        default:
            break
        }
        guard let scalar = Unicode.Scalar(scalarValue) else {
            throw JSONError(offset: index, reason: "invalid code point")
        }
        Self.appendUTF8(scalar.value, to: &scratch)
        return next
    }

    private func hexQuad(at index: Int) throws(JSONError) -> UInt16 {
        guard index + 4 <= bytes.count else { throw JSONError(offset: index, reason: "expected four hex digits") }
        var value: UInt16 = 0
        for offset in 0..<4 {
            let byte = bytes[index + offset]
            let digit: UInt8
            switch byte {
            case Byte.zero...Byte.nine: digit = byte - Byte.zero
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw JSONError(offset: index + offset, reason: "expected a hex digit")
            }
            value = value << 4 | UInt16(digit)
        }
        return value
    }

    private static func appendUTF8(_ value: UInt32, to buffer: inout [UInt8]) {
        switch value {
        case 0..<0x80:
            buffer.append(UInt8(value))
        case 0x80..<0x800:
            buffer.append(UInt8(0xC0 | value >> 6))
            buffer.append(UInt8(0x80 | value & 0x3F))
        case 0x800..<0x10000:
            buffer.append(UInt8(0xE0 | value >> 12))
            buffer.append(UInt8(0x80 | value >> 6 & 0x3F))
            buffer.append(UInt8(0x80 | value & 0x3F))
        default:
            buffer.append(UInt8(0xF0 | value >> 18))
            buffer.append(UInt8(0x80 | value >> 12 & 0x3F))
            buffer.append(UInt8(0x80 | value >> 6 & 0x3F))
            buffer.append(UInt8(0x80 | value & 0x3F))
        }
    }

    // MARK: Numbers

    private mutating func parseNumber() throws(JSONError) -> JSONValue {
        let start = position
        var index = position
        let negative = bytes[index] == Byte.minus
        if negative { index += 1 }
        guard index < bytes.count, Self.isDigit(bytes[index]) else {
            throw JSONError(offset: index, reason: "expected a digit")
        }
        var magnitude: UInt64 = 0
        var overflow = false
        if bytes[index] == Byte.zero {
            index += 1
            if index < bytes.count, Self.isDigit(bytes[index]) {
                throw JSONError(offset: start, reason: "leading zeros are not allowed")
            }
        } else {
            while index < bytes.count, Self.isDigit(bytes[index]) {
                let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times10.addingReportingOverflow(UInt64(bytes[index] - Byte.zero))
                magnitude = sum
                overflow = overflow || o1 || o2
                index += 1
            }
        }
        var isInteger = true
        if index < bytes.count, bytes[index] == Byte.dot {
            isInteger = false
            index += 1
            guard index < bytes.count, Self.isDigit(bytes[index]) else {
                throw JSONError(offset: index, reason: "expected a digit after '.'")
            }
            while index < bytes.count, Self.isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == Byte.e || bytes[index] == Byte.upperE {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == Byte.plus || bytes[index] == Byte.minus { index += 1 }
            guard index < bytes.count, Self.isDigit(bytes[index]) else {
                throw JSONError(offset: index, reason: "expected a digit in the exponent")
            }
            while index < bytes.count, Self.isDigit(bytes[index]) { index += 1 }
        }
        position = index
        if isInteger, !overflow {
            if !negative, magnitude <= UInt64(Int64.max) { return .int(Int64(magnitude)) }
            if negative, magnitude <= UInt64(Int64.max) + 1 { return .int(Int64(truncatingIfNeeded: 0 &- magnitude)) }
        }
        let text = UnsafeBufferPointer(rebasing: bytes[start..<index])
        guard let value = Self.fastDouble(text) ?? Double(String(decoding: text, as: UTF8.self)), value.isFinite else {
            throw JSONError(offset: start, reason: "number out of range")
        }
        return .double(value)
    }

    /// Exact powers of ten a `Double` holds.
    private static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18,
        1e19, 1e20, 1e21, 1e22,
    ]

    /// Clinger's fast path: a mantissa below 2^53 scaled by 10^±22 at most is correctly rounded by one
    /// multiplication or division. `nil` sends the text to the standard library's full algorithm.
    private static func fastDouble(_ text: UnsafeBufferPointer<UInt8>) -> Double? {
        var index = 0
        let negative = text[0] == Byte.minus
        if negative { index += 1 }
        var mantissa: UInt64 = 0
        var digits = 0
        var exponent = 0
        var seenDot = false
        while index < text.count {
            let byte = text[index]
            if Self.isDigit(byte) {
                if mantissa != 0 || byte != Byte.zero { digits += 1 }
                guard digits <= 15 else { return nil }
                mantissa = mantissa * 10 + UInt64(byte - Byte.zero)
                if seenDot { exponent -= 1 }
            } else if byte == Byte.dot {
                seenDot = true
            } else {
                break
            }
            index += 1
        }
        if index < text.count {
            // An exponent: [eE][+-]?digits.
            index += 1
            var exponentNegative = false
            if text[index] == Byte.minus || text[index] == Byte.plus {
                exponentNegative = text[index] == Byte.minus
                index += 1
            }
            var explicit = 0
            while index < text.count {
                explicit = explicit * 10 + Int(text[index] - Byte.zero)
                guard explicit <= 1_000 else { return nil }
                index += 1
            }
            exponent += exponentNegative ? -explicit : explicit
        }
        var value = Double(mantissa)
        if mantissa == 0 {
            value = 0
        } else if exponent >= 0 {
            guard exponent <= 22 else { return nil }
            value *= powersOfTen[exponent]
        } else {
            guard exponent >= -22 else { return nil }
            value /= powersOfTen[-exponent]
        }
        return negative ? -value : value
    }

    // MARK: Helpers

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    func peek() -> UInt8? { position < bytes.count ? bytes[position] : nil }

    private func fail(_ reason: String) -> JSONError { JSONError(offset: position, reason: reason) }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= Byte.zero && byte <= Byte.nine }

    private static func describe(_ byte: UInt8) -> String {
        byte >= 0x20 && byte < 0x7F ? String(UnicodeScalar(byte)) : "\\x" + String(byte, radix: 16)
    }
}

/// The bytes JSON's grammar is made of.
enum Byte {
    static let quote = UInt8(ascii: "\"")
    static let backslash = UInt8(ascii: "\\")
    static let slash = UInt8(ascii: "/")
    static let openBrace = UInt8(ascii: "{")
    static let closeBrace = UInt8(ascii: "}")
    static let openBracket = UInt8(ascii: "[")
    static let closeBracket = UInt8(ascii: "]")
    static let colon = UInt8(ascii: ":")
    static let comma = UInt8(ascii: ",")
    static let minus = UInt8(ascii: "-")
    static let plus = UInt8(ascii: "+")
    static let dot = UInt8(ascii: ".")
    static let zero = UInt8(ascii: "0")
    static let nine = UInt8(ascii: "9")
    static let b = UInt8(ascii: "b")
    static let e = UInt8(ascii: "e")
    static let upperE = UInt8(ascii: "E")
    static let f = UInt8(ascii: "f")
    static let n = UInt8(ascii: "n")
    static let r = UInt8(ascii: "r")
    static let t = UInt8(ascii: "t")
    static let u = UInt8(ascii: "u")
}
