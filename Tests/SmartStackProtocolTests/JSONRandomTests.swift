import SmartStackCore
import Testing

@testable import SmartStackProtocol

/// Invariant over seeded random values: `parse(serialize(v)) == v`, and serialising again gives the same bytes.
@Suite("JSON random round trips")
struct JSONRandomTests {
    static let alphabet: [Unicode.Scalar] = [
        "a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1F}", "\u{7F}", "é", "€", "😀", "\u{FFFD}",
        "\u{10FFFF}",
        "\u{2028}",
    ]

    static func randomString(_ generator: inout SeededGenerator) -> String {
        var scalars = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...12, using: &generator) {
            scalars.append(alphabet.randomElement(using: &generator) ?? "a")
        }
        return String(scalars)
    }

    static func randomDouble(_ generator: inout SeededGenerator) -> Double {
        switch Int.random(in: 0..<4, using: &generator) {
        case 0: return Double.random(in: -1...1, using: &generator)
        case 1: return Double(bitPattern: generator.next()).isFinite ? Double(bitPattern: generator.next()) : 0.5
        case 2: return Double(Int.random(in: -1_000...1_000, using: &generator)) / 8
        default: return Double.random(in: -1e300...1e300, using: &generator)
        }
    }

    static func randomValue(_ generator: inout SeededGenerator, depth: Int) -> JSONValue {
        let kind = Int.random(in: 0..<(depth > 5 ? 5 : 7), using: &generator)
        switch kind {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &generator))
        case 2: return .int(Int64(bitPattern: generator.next()) >> Int64.random(in: 0...63, using: &generator))
        case 3:
            let number = randomDouble(&generator)
            return .double(number.isFinite ? number : 0.5)
        case 4: return .string(randomString(&generator))
        case 5:
            return .array(
                (0..<Int.random(in: 0...5, using: &generator)).map { _ in randomValue(&generator, depth: depth + 1) })
        default:
            var object = JSONObject()
            for _ in 0..<Int.random(in: 0...24, using: &generator) {
                object[randomString(&generator)] = randomValue(&generator, depth: depth + 1)
            }
            return .object(object)
        }
    }

    @Test(arguments: [1, 2, 3, 42, 2024] as [UInt64])
    func roundTrips(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        for _ in 0..<300 {
            let value = Self.randomValue(&generator, depth: 0)
            let bytes = JSON.serialize(value)
            let parsed = try JSON.parse(bytes)
            #expect(parsed == value)
            #expect(JSON.serialize(parsed) == bytes)
        }
    }

    @Test(arguments: [7, 8] as [UInt64])
    func mutatedTextNeverCrashesAndParsesToWhatItSerialisesTo(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        for _ in 0..<500 {
            var bytes = JSON.serialize(Self.randomValue(&generator, depth: 0))
            guard !bytes.isEmpty else { continue }
            bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            if let value = try? JSON.parse(bytes) {
                #expect(try JSON.parse(JSON.serialize(value)) == value)
            }
        }
    }
}
