import SmartStackCore
import Testing

@testable import SmartStackProtocol

/// The hand-written encoders give exactly the bytes of the general ones.
@Suite("Fast paths")
struct FastPathTests {
    @Test func decisionEncodesDirectlyToTheSameBytes() throws {
        var engine = try ReplyTests.engine()
        var decisions = engine.publish(at: Fixed.t(3_600)).decisions
        decisions.append(try engine.evaluate(stack: try StackID("home"), at: Fixed.t(7_200)))
        decisions.append(try engine.evaluate(stack: try StackID("home"), at: Fixed.t(40 * 3_600)))
        for decision in decisions {
            var direct: [UInt8] = Array("prefix".utf8)
            decision.encodeWireObject(into: &direct)
            #expect(direct == Array("prefix".utf8) + JSON.serialize(.object(decision.wireObject)))
        }
    }

    /// A suggestion's entry carries its configuration, read back from its id, in the text form `ConfigureStack`
    /// takes; the direct encoder writes the same bytes as the general one.
    @Test func aSuggestionCarriesItsConfiguration() throws {
        let kind = try WidgetKindID(app: try AppID("com.example.weather"), kind: "city")
        let configuration = Configuration([
            "city": .string("São Paulo"), "note": .string("a&b=c%d;\u{1}"), "plain": .string("x"),
        ])
        func entry(_ instance: String, suggested: Bool = true) -> DecisionEntry {
            DecisionEntry(
                instance: instance, kind: kind, position: 0, score: 0.5, suggested: suggested, pinned: false,
                reason: suggested ? .suggestion : .behaviour, contributions: SignalShares())
        }
        let suggestion = entry("suggestion:com.example.weather/city?\(configuration.queryText)")
        let pairs = try #require(suggestion.suggestedConfiguration)
        #expect(pairs.map(\.name) == ["city", "note", "plain"])
        #expect(pairs.map(\.value) == ["São Paulo", "a&b=c%d;\u{1}", "x"])
        #expect(
            suggestion.wireObject["configuration"]
                == .object(["city": "São Paulo", "note": .string("a&b=c%d;\u{1}"), "plain": "x"]))
        // No configuration: an empty object; a widget of the stack, or an id of another kind: none.
        #expect(entry("suggestion:com.example.weather/city").wireObject["configuration"] == .object([:]))
        #expect(entry("w1", suggested: false).suggestedConfiguration == nil)
        #expect(entry("w1", suggested: false).wireObject["configuration"] == nil)
        #expect(entry("suggestion:com.example.weather/cityscape?x=1").suggestedConfiguration == nil)
        for decision in [
            Decision(
                stack: try StackID("home"), revision: 1, time: Fixed.t(0),
                entries: [suggestion, entry("suggestion:com.example.weather/city"), entry("w1", suggested: false)])
        ] {
            var direct: [UInt8] = []
            decision.encodeWireObject(into: &direct)
            #expect(direct == JSON.serialize(.object(decision.wireObject)))
            let interface = try #require(Fixed.interface(SmartStackMethod.getStack.interface))
            #expect(interface.validateOutput(of: "GetStack", GetStackRequest.reply(decision)) == nil)
        }
    }

    @Test func serializedParametersFrameLikeAReply() throws {
        let decision = try ReplyTests.engine().evaluate(stack: try StackID("home"), at: Fixed.t(60))
        var parameters: [UInt8] = []
        decision.encodeWireObject(into: &parameters)
        for continues in [false, true] {
            var framed: [UInt8] = []
            VarlinkReply.encode(serializedParameters: parameters, continues: continues, into: &framed)
            #expect(framed == VarlinkReply(parameters: decision.wireObject, continues: continues).encoded)
        }
    }

    static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        a >= 0 ? a / b : -((-a + b - 1) / b)
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func timestampsFormatLikeCore(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        let offsets: [Int32] = [
            0, 3_600, -8 * 3_600, 5 * 3_600 + 1_800, -(9 * 3_600 + 30 * 60), 14 * 3_600, -12 * 3_600,
        ]
        for _ in 0..<2_000 {
            // 1900 to 2200, and now and then near the representable edges.
            var micros = Int64.random(in: -2_208_988_800_000_000...7_258_118_400_000_000, using: &generator)
            if Bool.random(using: &generator), Bool.random(using: &generator) {
                micros =
                    [-62_167_219_200_000_000, 253_402_300_799_999_999, 0, -1, 1].randomElement(using: &generator) ?? 0
            }
            let offset = offsets.randomElement(using: &generator) ?? 0
            let timestamp = Timestamp(microseconds: micros, utcOffsetSeconds: offset)
            let expected: JSONValue
            let local = Self.floorDivide(micros, 1_000_000) + Int64(offset)
            if local < -62_167_219_200 || local > 253_402_300_799 {
                expected = .null
            } else {
                expected = .string(timestamp.rfc3339)
            }
            #expect(timestamp.wireValue == expected, "\(micros) \(offset)")
            if let text = timestamp.wireValue.stringValue {
                let parsed = try Timestamp(rfc3339: text)
                #expect(parsed.microseconds == micros)
            }
        }
    }
}
