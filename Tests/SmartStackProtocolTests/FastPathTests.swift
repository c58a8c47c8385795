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
