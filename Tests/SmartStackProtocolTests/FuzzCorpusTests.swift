import Foundation
import Testing

@testable import SmartStackProtocol

/// The wire fuzzer's corpus (Tests/fuzz/corpus/wire, seeds and every input that once crashed) replayed through the
/// checks of `fuzz-wire` without the sanitizer build: see docs/fuzzing.md.
@Suite("Fuzz corpus: wire")
struct WireFuzzCorpusTests {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("fuzz/corpus/wire")

    static func inputs() throws -> [[UInt8]] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        return try names.map { Array(try Data(contentsOf: directory.appendingPathComponent($0))) }
    }

    @Test func corpusIsThere() throws {
        #expect(try Self.inputs().count > 50)
    }

    @Test func jsonRoundTrips() throws {
        for input in try Self.inputs() {
            guard let value = try? JSON.parse(input) else { continue }
            #expect(try JSON.parse(JSON.serialize(value)) == value)
        }
    }

    /// Each input as the fuzzer reads it: the first byte sets the size of the pieces fed to the frame decoder.
    @Test func framesDecodeAndCallsRoundTrip() throws {
        for input in try Self.inputs() {
            guard let first = input.first else { continue }
            let piece = Int(first % 64) + 1
            var decoder = VarlinkFrameDecoder(maxFrameSize: 4_096)
            var offset = 1
            reading: while offset < input.count {
                let end = min(input.count, offset + piece)
                decoder.append(input[offset..<end])
                offset = end
                do {
                    while let frame = try decoder.next() {
                        _ = try? VarlinkReply(frame: frame)
                        let (fast, general) = CallTests.bothWays(frame)
                        #expect(CallTests.same(fast, general))
                        #expect(SmartStackRequest.summary(of: fast) == SmartStackRequest.summary(of: general))
                        guard let call = try? VarlinkCall(frame: frame) else { continue }
                        var encoded: [UInt8] = []
                        call.encode(into: &encoded)
                        let again = try VarlinkCall(frame: Array(encoded.dropLast()))
                        #expect(again.method == call.method && again.parameters == call.parameters)
                        #expect(again.oneway == call.oneway && again.more == call.more && again.upgrade == call.upgrade)
                    }
                } catch {
                    break reading
                }
            }
        }
    }
}
