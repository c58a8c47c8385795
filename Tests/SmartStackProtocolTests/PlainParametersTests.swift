import Testing

@testable import SmartStackProtocol

/// The envelope's fast path for plain parameters (`VarlinkMethodRequest.decodePlain`, `GetStack`'s): the same
/// request, or the same error, as the general decoding, and taken only where it applies.
@Suite("Plain parameters")
struct PlainParametersTests {
    static let getStack = #"{"method":"io.smartstack.Shell.GetStack","parameters":"#

    /// The request (or the error) a message decodes to through `VarlinkCall(bytes:)` and through the general
    /// parser, with whether the fast path decoded it.
    static func bothWays(_ text: String) -> (fast: String, general: String, plain: Bool) {
        let frame = Array(text.utf8)
        return frame.withUnsafeBufferPointer { bytes in
            let fast = Result { () throws(VarlinkFramingError) in try VarlinkCall(bytes: bytes) }
            let general = Result { () throws(VarlinkFramingError) in try VarlinkCall(general: bytes) }
            let plain = (try? fast.get())?.decodedBox != nil
            return (SmartStackRequest.summary(of: fast), SmartStackRequest.summary(of: general), plain)
        }
    }

    @Test("the usual GetStack is read from its plain parameters, to the general decoding's request")
    func usualGetStack() throws {
        for text in [
            Self.getStack + #"{"stack":"home"}}"#, Self.getStack + #" { "stack" : "home" } }"#,
            Self.getStack + #"{"stack":"desk-1.left_2"},"more":false}"#,
        ] {
            let (fast, general, plain) = Self.bothWays(text)
            #expect(plain, "\(text)")
            #expect(fast == general, "\(text)")
        }
        let call = try VarlinkCall(frame: Array((Self.getStack + #"{"stack":"home"}}"#).utf8))
        #expect(call.parameters == ["stack": .string("home")])
        guard case .getStack(let request) = try SmartStackRequest(call: call) else {
            Issue.record("not a GetStack")
            return
        }
        #expect(request.stack.rawValue == "home" && request.at == nil)
    }

    @Test(
        "anything else goes through the general decoding, which names what is wrong",
        arguments: [
            #"{"stack":"two words"}}"#, #"{"stack":""}}"#, #"{"stack":"hömé"}}"#, #"{"stack":"h\u006fme"}}"#,
            #"{"stack":1}}"#, #"{"stack":null}}"#, #"{"stack":"a","stack":"b"}}"#, #"{}}"#, #"null}"#,
            #"{"stack":"home","at":"2026-12-03T10:00:00Z"}}"#, #"{"stack":"home","extra":"x"}}"#,
            #"{"stack":"home","a":"1","b":"2","c":"3","d":"4"}}"#, #"{"stack":"home"}"#, #"{"stack":"home"},}"#,
            #"{"stack":"home""#, #"{"stack" "home"}}"#, #"{"stack":"home" "x":"y"}}"#,
            #"{"stack":"\#(String(repeating: "x", count: 256))"}}"#,
        ])
    func otherParameters(parameters: String) {
        let (fast, general, plain) = Self.bothWays(Self.getStack + parameters)
        #expect(!plain)
        #expect(fast == general)
    }

    static let donate = #"{"method":"io.smartstack.Provider.Donate","parameters":"#

    @Test("the usual Donate is read from its plain parameters, to the general decoding's request")
    func usualDonate() throws {
        for parameters in [
            #"{"app":"org.load.app3","intent":"open","id":"1764284400-3-12345"}}"#,
            #"{"id":"x-1","intent":"open","app":"org.example.Mail"}}"#, #"{"app":"org.a","intent":"compose"}}"#,
            #"{"app":"org.a","intent":"play","id":"a","groupId":"album-7"}}"#,
        ] {
            let (fast, general, plain) = Self.bothWays(Self.donate + parameters)
            #expect(plain, "\(parameters)")
            #expect(fast == general, "\(parameters)")
        }
        let call = try VarlinkCall(frame: Array((Self.donate + #"{"app":"org.a","intent":"open","id":"d1"}}"#).utf8))
        guard case .donate(let request) = try SmartStackRequest(call: call) else {
            Issue.record("not a Donate")
            return
        }
        #expect(request.app.rawValue == "org.a" && request.intent == "open" && request.id == "d1")
        #expect(request.date == nil && request.groupId == nil && request.parameters.isEmpty)
        #expect(call.parameters == ["app": .string("org.a"), "intent": .string("open"), "id": .string("d1")])
    }

    @Test(
        "any other Donate goes through the general decoding",
        arguments: [
            #"{"app":"org.a","intent":"open","parameters":{}}}"#,
            #"{"app":"org.a","intent":"open","parameters":{"k":"v"}}}"#,
            #"{"app":"org.a","intent":"open","date":"2026-12-03T10:00:00Z"}}"#, #"{"app":"org.a"}}"#,
            #"{"intent":"open"}}"#, #"{"app":"not an app","intent":"open"}}"#, #"{"app":"org.a","intent":""}}"#,
            #"{"app":"org.a","intent":"open","id":""}}"#, #"{"app":"org.a","intent":"öffnen"}}"#,
            #"{"app":"org.a","intent":"open","id":"é"}}"#, #"{"app":"org.a","intent":"open","groupId":"ü"}}"#,
            #"{"app":"org.a","intent":"open","other":"x"}}"#, #"{"app":"org.a","app":"org.b","intent":"open"}}"#,
            #"{"app":"org.a","intent":"open","id":"1","groupId":"g","x":"y"}}"#,
            #"{"app":"org.a","intent":"open","id":"\#(String(repeating: "i", count: 300))"}}"#,
        ])
    func otherDonations(parameters: String) {
        let (fast, general, plain) = Self.bothWays(Self.donate + parameters)
        #expect(!plain)
        #expect(fast == general)
    }

    @Test("parameters before the method, or another method's, are not read this way")
    func onlyWhereItApplies() {
        for text in [
            #"{"parameters":{"stack":"home"},"method":"io.smartstack.Shell.GetStack"}"#,
            #"{"method":"io.smartstack.Shell.Explain","parameters":{"stack":"home"}}"#,
            #"{"method":"io.smartstack.Provider.ListDonations","parameters":{"app":"org.a"}}"#,
        ] {
            let (fast, general, plain) = Self.bothWays(text)
            #expect(!plain, "\(text)")
            #expect(fast == general, "\(text)")
        }
    }

    @Test("a call built in code, or changed, keeps its parameters")
    func changedCall() throws {
        var call = try VarlinkCall(frame: Array((Self.getStack + #"{"stack":"home"}}"#).utf8))
        call.method = "io.smartstack.Shell.Explain"
        #expect(call.decodedBox == nil)
        #expect(call.parameters == ["stack": .string("home")])
        #expect(try SmartStackRequest(call: call).method == .explain)
        var other = try VarlinkCall(frame: Array((Self.getStack + #"{"stack":"home"}}"#).utf8))
        other.parameters = ["stack": .string("desk")]
        #expect(other.decodedBox == nil)
        guard case .getStack(let request) = try SmartStackRequest(call: other) else {
            Issue.record("not a GetStack")
            return
        }
        #expect(request.stack.rawValue == "desk")
    }

    @Test("a method's name is matched by all its bytes: one byte off anywhere is no method")
    func nearMisses() {
        for method in SmartStackMethod.allCases {
            let name = Array(method.rawValue.utf8)
            for index in name.indices {
                var changed = name
                changed[index] = changed[index] == UInt8(ascii: "x") ? UInt8(ascii: "y") : UInt8(ascii: "x")
                let found = changed.withUnsafeBufferPointer { SmartStackMethod(utf8: $0) }
                #expect(found == nil, "\(String(decoding: changed, as: UTF8.self))")
            }
            #expect(name.withUnsafeBufferPointer { SmartStackMethod(utf8: $0) } == method)
            #expect(name.dropLast().withUnsafeBufferPointer { SmartStackMethod(utf8: $0) } == nil)
        }
        for short in ["", "a", "a.b.C", "io.smar"] {
            #expect(Array(short.utf8).withUnsafeBufferPointer { SmartStackMethod(utf8: $0) } == nil)
        }
    }
}
