import Testing

@testable import SmartStackProtocol

@Suite("Varlink framing")
struct FramingTests {
    static let messages = [#"{"method":"a.b.C"}"#, #"{"method":"a.b.D","parameters":{"x":"é\u0000"}}"#, "{}"]

    static var stream: [UInt8] { messages.flatMap { Array($0.utf8) + [0] } }

    /// Feeds `chunks` and collects every frame.
    static func frames(_ chunks: [[UInt8]], limit: Int = 1 << 20) throws -> [String] {
        var decoder = VarlinkFrameDecoder(maxFrameSize: limit)
        var frames: [String] = []
        for chunk in chunks {
            decoder.append(chunk)
            while let frame = try decoder.next() { frames.append(String(decoding: frame, as: UTF8.self)) }
        }
        return frames
    }

    @Test func severalFramesInOneChunk() throws {
        #expect(try Self.frames([Self.stream]) == Self.messages)
    }

    @Test func splitAtEveryByteBoundary() throws {
        let stream = Self.stream
        for split in 0...stream.count {
            #expect(try Self.frames([Array(stream[..<split]), Array(stream[split...])]) == Self.messages)
        }
        for first in 0...stream.count {
            for second in first...stream.count {
                let chunks = [Array(stream[..<first]), Array(stream[first..<second]), Array(stream[second...])]
                #expect(try Self.frames(chunks) == Self.messages)
            }
        }
    }

    @Test func oneByteAtATime() throws {
        #expect(try Self.frames(Self.stream.map { [$0] }) == Self.messages)
    }

    @Test func incompleteFrameWaits() throws {
        var decoder = VarlinkFrameDecoder(maxFrameSize: 100)
        decoder.append(Array(#"{"method":"#.utf8))
        #expect(try decoder.next() == nil)
        #expect(try decoder.next() == nil)
        #expect(decoder.bufferedByteCount == 10)
        decoder.append(Array(#""a.b.C"}"#.utf8) + [0])
        #expect(try decoder.next().map { String(decoding: $0, as: UTF8.self) } == #"{"method":"a.b.C"}"#)
        #expect(try decoder.next() == nil)
        #expect(decoder.bufferedByteCount == 0)
    }

    @Test func emptyFrameIsReturnedAndRejectedAsACall() throws {
        #expect(try Self.frames([[0, 0]]) == ["", ""])
        #expect(throws: VarlinkFramingError.malformed("empty message")) { try VarlinkCall(frame: []) }
    }

    @Test func oversizedFrameFailsAsSoonAsTheLimitIsPassed() throws {
        var decoder = VarlinkFrameDecoder(maxFrameSize: 8)
        decoder.append(Array("12345678".utf8))
        #expect(try decoder.next() == nil)
        decoder.append([UInt8(ascii: "9")])
        #expect(throws: VarlinkFramingError.frameTooLarge(limit: 8)) { try decoder.next() }
        // The decoder stays failed: the connection is to be closed.
        decoder.append([0])
        #expect(throws: VarlinkFramingError.frameTooLarge(limit: 8)) { try decoder.next() }
    }

    @Test func oversizedFrameArrivingWholeIsRejected() throws {
        var decoder = VarlinkFrameDecoder(maxFrameSize: 4)
        decoder.append(Array("abcd".utf8) + [0] + Array("abcde".utf8) + [0])
        #expect(try decoder.next() == Array("abcd".utf8))
        #expect(throws: VarlinkFramingError.frameTooLarge(limit: 4)) { try decoder.next() }
    }

    @Test func frameExactlyAtTheLimitPasses() throws {
        let frame = [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20)
        var decoder = VarlinkFrameDecoder(maxFrameSize: 1 << 20)
        decoder.append(frame)
        #expect(try decoder.next() == nil)
        decoder.append([0])
        #expect(try decoder.next()?.count == 1 << 20)
        #expect(VarlinkFrameDecoder.defaultMaxFrameSize == 1 << 20)
    }

    @Test func manyFramesThroughOneDecoderCompactTheBuffer() throws {
        var decoder = VarlinkFrameDecoder(maxFrameSize: 64)
        var count = 0
        for index in 0..<10_000 {
            // Each chunk ends mid-frame, so the buffer never empties by itself.
            decoder.append(Array("\(index)".utf8) + [0] + Array("x".utf8))
            while let frame = try decoder.next() {
                let expected = count == 0 ? "0" : "x\(count)"
                #expect(String(decoding: frame, as: UTF8.self) == expected)
                count += 1
            }
            #expect(decoder.bufferedByteCount == 1)
        }
        #expect(count == 10_000)
    }
}

@Suite("Varlink calls and replies")
struct CallTests {
    static func call(_ text: String) throws -> VarlinkCall { try VarlinkCall(frame: Array(text.utf8)) }

    @Test func minimalCall() throws {
        let call = try Self.call(#"{"method":"io.smartstack.Shell.ListStacks"}"#)
        #expect(call.method == "io.smartstack.Shell.ListStacks")
        #expect(call.interface == "io.smartstack.Shell")
        #expect(call.methodName == "ListStacks")
        #expect(call.parameters.isEmpty)
        #expect(!call.oneway && !call.more && !call.upgrade)
    }

    @Test("a call knows which of the service's methods it names, parsed, built or changed; another method is none")
    func knownMethod() throws {
        #expect(try Self.call(#"{"method":"io.smartstack.Shell.GetStack"}"#).known == .getStack)
        #expect(try Self.call(#"{"method":"org.example.Other"}"#).known == nil)
        var call = VarlinkCall(method: "io.smartstack.Provider.Donate")
        #expect(call.known == .donate)
        call.method = "org.varlink.service.GetInfo"
        #expect(call.known == .getInfo)
        call.method = "io.smartstack.Shell.Nope"
        #expect(call.known == nil)
        // Decoded where it lies in a decoder's buffer, as the server does.
        var decoder = VarlinkFrameDecoder()
        decoder.append(Array(#"{"method":"io.smartstack.Shell.ListStacks"}"#.utf8) + [0] + Array("{".utf8))
        let parsed = try decoder.nextFrame { bytes in
            Result { () throws(VarlinkFramingError) in try VarlinkCall(bytes: bytes) }
        }
        #expect(parsed?.known == .listStacks)
        #expect(decoder.bufferedByteCount == 1)
        #expect(try decoder.nextFrame { _ in Result<Int, VarlinkFramingError>.success(1) } == nil)
    }

    @Test func flagsAndParameters() throws {
        let call = try Self.call(
            #"{"method":"io.smartstack.Shell.Subscribe","parameters":{"stacks":["home"]},"more":true,"oneway":false,"upgrade":null,"future":1}"#
        )
        #expect(call.more)
        #expect(!call.oneway)
        #expect(!call.upgrade)
        #expect(call.parameters == ["stacks": ["home"]])
        let oneway = try Self.call(#"{"method":"io.smartstack.Shell.SetContext","oneway":true,"parameters":null}"#)
        #expect(oneway.oneway)
        #expect(oneway.parameters.isEmpty)
        // No method upgrades the connection: refused with an error naming the flag, the connection kept.
        let upgrade = try Self.call(#"{"method":"org.varlink.service.GetInfo","upgrade":true}"#)
        #expect(
            throws: VarlinkError.invalidParameter(
                "upgrade", reason: "no method of this service upgrades the connection")
        ) {
            try SmartStackRequest(call: upgrade)
        }
    }

    @Test(arguments: [
        ("", "empty message"), ("nope", "invalid JSON at byte 0: invalid literal"),
        ("xyz", "invalid JSON at byte 0: unexpected character 'x'"),
        ("[1]", "the message is not a JSON object"), ("{}", "no 'method'"),
        (#"{"method":1}"#, "'method' is not a string"),
        (#"{"method":"GetStack"}"#, "'method' is not an interface-qualified method name"),
        (#"{"method":"io.smartstack.Shell."}"#, "'method' is not an interface-qualified method name"),
        (#"{"method":"io.smartstack.Shell.getStack"}"#, "'method' is not an interface-qualified method name"),
        (#"{"method":"io..Shell.GetStack"}"#, "'method' is not an interface-qualified method name"),
        (#"{"method":"io.smart_stack.GetStack"}"#, "'method' is not an interface-qualified method name"),
        (#"{"method":".Shell.GetStack"}"#, "'method' is not an interface-qualified method name"),
        (#"{"method":"a.b.C","parameters":[]}"#, "'parameters' is not an object"),
        (#"{"method":"a.b.C","more":"yes"}"#, "'more' is not a boolean"),
        (#"{"method":"a.b.C","oneway":1}"#, "'oneway' is not a boolean"),
        (#"{"method":"a.b.C"} x"#, "invalid JSON at byte 19: unexpected text after the value"),
        // The fast path (one of the service's methods) and the general parser alike.
        (
            #"{"method":"io.smartstack.Shell.Subscribe","oneway":true,"more":true}"#,
            "'oneway' and 'more' exclude each other"
        ),
        (#"{"method":"a.b.C","more":true,"oneway":true}"#, "'oneway' and 'more' exclude each other"),
    ])
    func malformedCalls(text: String, reason: String) {
        #expect(throws: VarlinkFramingError.malformed(reason)) { try Self.call(text) }
    }

    /// Both ways of reading a call, for one message: where it lies (the envelope's fast path first) and through the
    /// general parser alone.
    static func bothWays(_ frame: [UInt8]) -> (
        fast: Result<VarlinkCall, VarlinkFramingError>,
        general: Result<
            VarlinkCall, VarlinkFramingError
        >
    ) {
        frame.withUnsafeBufferPointer { bytes in
            (
                Result { () throws(VarlinkFramingError) in try VarlinkCall(bytes: bytes) },
                Result { () throws(VarlinkFramingError) in try VarlinkCall(general: bytes) }
            )
        }
    }

    static func same(_ one: Result<VarlinkCall, VarlinkFramingError>, _ other: Result<VarlinkCall, VarlinkFramingError>)
        -> Bool
    {
        switch (one, other) {
        case (.success(let a), .success(let b)):
            a.method == b.method && a.known == b.known && a.parameters == b.parameters && a.oneway == b.oneway
                && a.more == b.more && a.upgrade == b.upgrade
        case (.failure(let a), .failure(let b)): a == b
        default: false
        }
    }

    static let deep = #"{"method":"io.smartstack.Shell.GetStack","parameters":{"a":"#

    @Test(
        "the envelope's fast path and the general parser read every message alike, errors included",
        arguments: [
            #"{"method":"io.smartstack.Shell.GetStack","parameters":{"stack":"home"}}"#,
            #" { "parameters" : { "stack" : "home" } , "method" : "io.smartstack.Shell.GetStack" } "#,
            #"{"method":"io.smartstack.Shell.Subscribe","more":true,"oneway":false,"upgrade":null,"parameters":null}"#,
            #"{"method":"io.smartstack.Shell.GetStack","parameters":{"stack":"h\u006fme"}}"#,
            #"{"method":"io.smartstack.Shell.Get\u0053tack"}"#, #"{"m\u0065thod":"io.smartstack.Shell.GetStack"}"#,
            #"{"method":"io.smartstack.Shell.GetStack","method":"io.smartstack.Shell.GetStack"}"#,
            #"{"method":"io.smartstack.Shell.GetStack","more":true,"more":false}"#,
            #"{"method":"io.smartstack.Shell.GetStack","parameters":{},"parameters":{}}"#,
            #"{"method":"io.smartstack.Shell.GetStack","future":1}"#, #"{"method":"org.example.Other"}"#,
            #"{"method":"io.smartstack.Shell.GetStackX"}"#, #"{"method":"io.smartstack.Shell.GetStac"}"#,
            #"{"method":"io.smartstack.Shell.GetStack","parameters":[]}"#,
            #"{"method":"io.smartstack.Shell.GetStack","parameters":{"stack":"a","stack":"b"}}"#,
            #"{"method":"io.smartstack.Shell.GetStack","oneway":1}"#,
            #"{"method":"io.smartstack.Shell.GetStack","more":"yes"}"#,
            #"{"method":"io.smartstack.Shell.GetStack","more":tru}"#,
            #"{"method":"io.smartstack.Shell.GetStack"} x"#, #"{"method":"io.smartstack.Shell.GetStack""#,
            #"{"method":"io.smartstack.Shell.GetStack",}"#, #"{"method":"io.smartstack.Shell.GetStack" "more":true}"#,
            #"{"parameters":{"stack":"home"}}"#, #"{}"#, #"[]"#, #"{"method":1}"#,
            "{\"method\":\"io.smartstack.\u{1}\"}",
            deep + String(repeating: "[", count: 61) + String(repeating: "]", count: 61) + "}}",
            deep + String(repeating: "[", count: 62) + String(repeating: "]", count: 62) + "}}",
            deep + String(repeating: "[", count: 63) + String(repeating: "]", count: 63) + "}}",
        ])
    func envelopeFastPathAgrees(text: String) {
        let (fast, general) = Self.bothWays(Array(text.utf8))
        #expect(Self.same(fast, general), "\(fast) vs \(general)")
    }

    @Test("every method of the service takes the fast path, named by the enumeration's own text")
    func everyMethodIsFound() throws {
        for method in SmartStackMethod.allCases {
            let frame = Array(#"{"method":"\#(method.rawValue)","parameters":{}}"#.utf8)
            let envelope = frame.withUnsafeBufferPointer { bytes in
                var parser = JSONParser(bytes: bytes, maxDepth: JSON.defaultMaxDepth)
                return parser.parseCallEnvelope()
            }
            #expect(envelope?.method == method)
            #expect(try Self.call(String(decoding: frame, as: UTF8.self)).known == method)
        }
    }

    @Test func callEncodingRoundTrips() throws {
        let call = VarlinkCall(method: "io.smartstack.Shell.Subscribe", parameters: ["stacks": ["a"]], more: true)
        var buffer: [UInt8] = []
        call.encode(into: &buffer)
        #expect(buffer.last == 0)
        let decoded = try VarlinkCall(frame: Array(buffer.dropLast()))
        #expect(decoded.method == call.method && decoded.parameters == call.parameters && decoded.more)
    }

    @Test func replyEncoding() throws {
        func text(_ reply: VarlinkReply) -> String { String(decoding: reply.encoded.dropLast(), as: UTF8.self) }
        #expect(text(VarlinkReply()) == #"{"parameters":{}}"#)
        #expect(text(VarlinkReply(parameters: ["revision": 3])) == #"{"parameters":{"revision":3}}"#)
        #expect(
            text(VarlinkReply(parameters: ["a": "b"], continues: true)) == #"{"parameters":{"a":"b"},"continues":true}"#
        )
        #expect(
            text(VarlinkReply(error: .invalidParameter("widgets[2].instance", reason: "required")))
                == #"{"error":"org.varlink.service.InvalidParameter","parameters":{"parameter":"widgets[2].instance","reason":"required"}}"#
        )
        #expect(
            text(VarlinkReply(error: .expectedMore()))
                == #"{"error":"org.varlink.service.ExpectedMore","parameters":{}}"#)
        #expect(VarlinkReply().encoded.last == 0)
        #expect(VarlinkReply(parameters: ["nul": "\u{0}"]).encoded.filter { $0 == 0 }.count == 1)
    }

    @Test func repliesAppendToOneBuffer() throws {
        var buffer: [UInt8] = []
        VarlinkReply(parameters: ["n": 1], continues: true).encode(into: &buffer)
        VarlinkReply(error: .permissionDenied()).encode(into: &buffer)
        var decoder = VarlinkFrameDecoder()
        decoder.append(buffer)
        let first = try VarlinkReply(frame: try #require(try decoder.next()))
        let second = try VarlinkReply(frame: try #require(try decoder.next()))
        #expect(first.parameters == ["n": 1] && first.continues && first.error == nil)
        #expect(second.error == .permissionDenied())
        #expect(try decoder.next() == nil)
    }

    @Test func standardErrors() {
        #expect(VarlinkError.interfaceNotFound("x.y").name == "org.varlink.service.InterfaceNotFound")
        #expect(VarlinkError.interfaceNotFound("x.y").parameters == ["interface": "x.y"])
        #expect(VarlinkError.methodNotFound("x.y.Z").parameters == ["method": "x.y.Z"])
        #expect(VarlinkError.methodNotImplemented("x.y.Z").name == "org.varlink.service.MethodNotImplemented")
        #expect(VarlinkError.expectedMore().name == "org.varlink.service.ExpectedMore")
        #expect(VarlinkError.permissionDenied().name == "org.varlink.service.PermissionDenied")
        #expect(VarlinkError.invalidParameter("date", reason: "bad").parameter == "date")
    }

    @Test func serviceInfo() {
        let info = VarlinkServiceInfo(
            vendor: "smartstack", product: "smartstackd", version: "0.1", url: "https://example.org",
            interfaces: VarlinkInterfaces.names)
        #expect(Fixed.interface("org.varlink.service")?.validateOutput(of: "GetInfo", info.wireObject) == nil)
        #expect(info.wireObject["interfaces"]?.arrayValue?.count == 4)
    }
}
