import Testing

@testable import SmartStackProtocol

@Suite("JSON parsing and serialising")
struct JSONTests {
    @Test(arguments: [
        ("null", JSONValue.null), ("true", .bool(true)), ("false", .bool(false)), ("0", .int(0)), ("-0", .int(0)),
        ("42", .int(42)), ("-17", .int(-17)), ("1.5", .double(1.5)), ("-0.25", .double(-0.25)), ("1e3", .double(1000)),
        ("1E+2", .double(100)), ("2.5e-3", .double(0.0025)), ("\"\"", .string("")), ("\"a\"", .string("a")),
        ("[]", .array([])), ("{}", .object([:])), (" \t\r\n 7 \n", .int(7)),
        ("9223372036854775807", .int(Int64.max)), ("-9223372036854775808", .int(Int64.min)),
        ("9223372036854775808", .double(9_223_372_036_854_775_808)),
        ("-9223372036854775809", .double(-9.223372036854775808e18)),
        ("123456789012345678901234567890", .double(1.2345678901234568e29)),
        ("0.1", .double(0.1)), ("1e-400", .double(0)), ("5e-324", .double(.leastNonzeroMagnitude)),
        ("1.7976931348623157e308", .double(1.7976931348623157e308)), ("1.0", .double(1)),
    ])
    func scalars(text: String, expected: JSONValue) throws {
        #expect(try parse(text) == expected)
    }

    @Test func negativeZeroDoubleKeepsItsSign() throws {
        let value = try parse("-0.0")
        #expect(value.doubleValue?.sign == .minus)
        #expect(serialized(value) == "-0.0")
    }

    @Test func hardDoublesMatchTheStandardLibrary() throws {
        for text in [
            "0.30000000000000004", "2.2250738585072014e-308", "4.9406564584124654e-324",
            "1.00000000000000011102230246251565e0",
            "9007199254740993", "9007199254740993.0", "123456789012345.678", "0.000001234567890123456789", "1e22",
            "1e23",
            "8.98846567431158e307", "-1.7976931348623157e308",
        ] {
            #expect(try parse(text).doubleValue == Double(text), "\(text)")
        }
    }

    @Test(arguments: [
        "", " ", "01", "-01", "00", "1.", ".5", "-", "+1", "1e", "1e+", "0x10", "NaN", "Infinity", "-Infinity", "1e400",
        "-1e400", "tru", "nul", "True", "[1,]", "[,1]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "{'a':1}", "[1 2]",
        "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\uZZZZ\"", "[", "{", "1 2", "[1] x", "{}{}", "\"a\"\"b\"", "// c\n1",
        "/* c */1", "\u{FEFF}1", "\"tab\there\"", "\"new\nline\"",
    ])
    func rejects(text: String) {
        #expect(parseError(text) != nil, "accepted \(text.debugDescription)")
    }

    @Test func errorsCarryTheOffset() {
        #expect(parseError("[1, 2, x]")?.offset == 7)
        #expect(parseError("[1, 02]")?.reason == "leading zeros are not allowed")
        #expect(parseError("{\"a\": 1} garbage")?.offset == 9)
        #expect(parseError("{\"a\": 1} garbage")?.reason == "unexpected text after the value")
    }

    @Test func escapes() throws {
        #expect(try parse(#""\"\\\/\b\f\n\r\t""#) == .string("\"\\/\u{08}\u{0C}\n\r\t"))
        #expect(try parse(#""\u0041\u00e9\u20AC""#) == .string("Aé€"))
        #expect(try parse(#""\u0000""#) == .string("\u{0}"))
        #expect(try parse(#""x\ud83d\ude00y""#) == .string("x😀y"))
        #expect(try parse(#""\uD834\uDD1E""#) == .string("𝄞"))
        #expect(try parse("\"raw é 😀 and \\n escape\"") == .string("raw é 😀 and \n escape"))
    }

    @Test(arguments: [
        #""\ud83d""#, #""\ud83dx""#, #""\ud83d\u0041""#, #""\ude00""#, #""\ude00\ud83d""#, #""\ud83d\ud83d""#,
    ])
    func unpairedSurrogatesAreRejected(text: String) {
        #expect(parseError(text)?.reason.contains("surrogate") == true)
    }

    @Test(
        arguments: [
            [0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22],
            [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], [0x22, 0x5C, 0x6E, 0xC3, 0x22], [0x22, 0x80, 0x22],
        ] as [[UInt8]])
    func invalidUTF8IsRejected(bytes: [UInt8]) {
        #expect(parseError(bytes: bytes)?.reason == "invalid UTF-8 in a string")
    }

    @Test func validMultibyteUTF8IsAccepted() throws {
        #expect(try JSON.parse([0x22, 0xC3, 0xA9, 0xF0, 0x9F, 0x98, 0x80, 0x22] as [UInt8]) == .string("é😀"))
    }

    @Test func nestingIsLimited() throws {
        let deep = { (depth: Int) in String(repeating: "[", count: depth) + String(repeating: "]", count: depth) }
        #expect(parseError(deep(64)) == nil)
        #expect(parseError(deep(65))?.reason == "nested deeper than 64 levels")
        #expect(parseError(deep(10), maxDepth: 9) != nil)
        #expect(parseError(String(repeating: "{\"a\":", count: 65) + "1" + String(repeating: "}", count: 65)) != nil)
        // Far deeper than the limit fails without recursing that deep.
        #expect(parseError(deep(100_000)) != nil)
    }

    @Test func duplicateKeysAreRejected() {
        #expect(parseError(#"{"a":1,"a":2}"#)?.reason == "duplicate key 'a'")
        let many = (0..<40).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
        #expect(parseError("{\(many)}") == nil)
        #expect(parseError("{\(many),\"k7\":0}")?.reason == "duplicate key 'k7'")
    }

    @Test func objectsKeepInsertionOrder() throws {
        let value = try parse(#"{"z":1,"a":2,"m":{"y":true,"b":null}}"#)
        #expect(value.objectValue?.keys == ["z", "a", "m"])
        #expect(serialized(value) == #"{"z":1,"a":2,"m":{"y":true,"b":null}}"#)
    }

    @Test func serialisesCompactlyWithEscapes() {
        let value: JSONValue = [
            "s": "quote \" backslash \\ newline \n tab \t nul \u{0} bell \u{7} del \u{7F} é 😀", "n": -12,
            "d": 0.5, "big": .double(1e21), "tiny": .double(1e-7), "list": [true, false, nil, [], [:]],
        ]
        #expect(
            serialized(value)
                == #"{"s":"quote \" backslash \\ newline \n tab \t nul \u0000 bell \u0007 del "#
                + "\u{7F} é 😀\"" + #","n":-12,"d":0.5,"big":1e+21,"tiny":1e-07,"list":[true,false,null,[],{}]}"#)
    }

    @Test func nonFiniteDoublesBecomeNull() {
        #expect(serialized(.double(.nan)) == "null")
        #expect(serialized(.double(.infinity)) == "null")
        #expect(serialized(.double(-.infinity)) == "null")
    }

    @Test func integersAtTheEdges() throws {
        for number in [Int64.min, Int64.min + 1, -1, 0, 1, 9, 10, 99, 100, Int64.max - 1, Int64.max] {
            #expect(serialized(.int(number)) == String(number))
            #expect(try parse(String(number)) == .int(number))
        }
    }

    @Test func serialiseAppendsToAReusedBuffer() {
        var buffer: [UInt8] = Array("prefix:".utf8)
        JSON.serialize(["a": 1] as JSONObject, into: &buffer)
        JSON.serialize(JSONObject(), into: &buffer)
        #expect(String(decoding: buffer, as: UTF8.self) == #"prefix:{"a":1}{}"#)
    }

    @Test func serialiseWritesTheSameWhetherTheBufferGrowsOrHasRoom() throws {
        // A long text bounds at six bytes a byte: the buffer either grows (a new array written in place, the
        // prefix copied) or, with room reserved, writes into its own capacity without reallocating.
        let text = String(repeating: "plain text, \"quoted\", tab\t ", count: 400)
        let value: JSONValue = ["text": .string(text), "n": 1]
        #expect(try parse(serialized(value)) == value)
        let expected = "prefix:" + serialized(value)

        var growing: [UInt8] = Array("prefix:".utf8)
        JSON.serialize(value, into: &growing)
        #expect(String(decoding: growing, as: UTF8.self) == expected)

        var roomy: [UInt8] = Array("prefix:".utf8)
        roomy.reserveCapacity(8 * text.utf8.count)
        let capacity = roomy.capacity
        JSON.serialize(value, into: &roomy)
        #expect(String(decoding: roomy, as: UTF8.self) == expected)
        #expect(roomy.capacity == capacity)
    }

    @Test func parsesNonContiguousCollections() throws {
        let bytes = Array(#"{"a":[1,2.5,"x"]}"#.utf8)
        let lazy = bytes.lazy.map { $0 }  // not contiguous
        #expect(try JSON.parse(lazy) == ["a": [1, 2.5, "x"]])
        #expect(try JSON.parse(bytes[...]) == ["a": [1, 2.5, "x"]])
        #expect(try JSON.parse(#" "slice" "#.utf8) == "slice")
    }
}

@Suite("JSONObject")
struct JSONObjectTests {
    @Test func subscriptSetsReplacesAndRemoves() {
        var object = JSONObject()
        object["b"] = 1
        object["a"] = 2
        object["b"] = 3
        #expect(object.keys == ["b", "a"])
        #expect(object["b"] == 3)
        object["b"] = nil
        #expect(object.keys == ["a"])
        #expect(object.count == 1)
        #expect(object["missing"] == nil)
    }

    @Test func largeObjectsStayConsistentAcrossTheIndexThreshold() {
        var object = JSONObject()
        for index in 0..<50 { object["k\(index)"] = .int(Int64(index)) }
        #expect(object.count == 50)
        for index in stride(from: 0, to: 50, by: 3) { object["k\(index)"] = nil }
        #expect(object.count == 33)
        for index in 0..<50 {
            #expect(object["k\(index)"] == (index % 3 == 0 ? nil : .int(Int64(index))))
        }
        for index in 0..<30 { object["k\(index)"] = nil }
        #expect(object.count == 13)
        #expect(object["k49"] == 49)
        object["new"] = true
        #expect(object.keys.last == "new")
    }

    @Test func equalityAndHashIgnoreOrder() {
        let lhs: JSONObject = ["a": 1, "b": [1, 2], "c": ["x": nil]]
        let rhs: JSONObject = ["c": ["x": nil], "a": 1, "b": [1, 2]]
        #expect(lhs == rhs)
        #expect(lhs.hashValue == rhs.hashValue)
        #expect(lhs != ["a": 1, "b": [2, 1], "c": ["x": nil]])
        #expect(lhs != ["a": 1, "b": [1, 2]])
        #expect(JSONValue.int(1) != JSONValue.double(1))
    }

    @Test func iteratesInOrder() {
        let object: JSONObject = ["x": 1, "y": 2, "z": 3]
        #expect(object.map(\.key) == ["x", "y", "z"])
        #expect(object.values == [1, 2, 3])
    }
}
