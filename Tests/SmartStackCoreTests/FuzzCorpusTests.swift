import Foundation
import SmartStackCore
import Testing

/// The codec fuzzer's corpus (Tests/fuzz/corpus/codec: real encoded events and snapshots, and every input that
/// once crashed) replayed through the checks of `fuzz-codec` without the sanitizer build: see docs/fuzzing.md.
@Suite("Fuzz corpus: codec")
struct CodecFuzzCorpusTests {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("fuzz/corpus/codec")

    static func inputs() throws -> [[UInt8]] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        return try names.map { Array(try Data(contentsOf: directory.appendingPathComponent($0))) }
    }

    /// An engine survives its own snapshot.
    static func expectRoundTrip(_ engine: Engine) throws {
        let bytes = engine.snapshot()
        #expect(try Engine(snapshot: bytes, settings: engine.settings).snapshot() == bytes)
    }

    @Test func corpusHoldsEventsAndSnapshots() throws {
        let inputs = try Self.inputs()
        #expect(inputs.contains { $0.first == 0 && $0.count > 100 })
        #expect(
            inputs.contains {
                $0.first == 1 && (try? Engine(snapshot: Array($0.dropFirst()), settings: EngineSettings())) != nil
            })
    }

    /// Each input as the fuzzer reads it: mode byte 0, then records of a length byte and one encoded event; or
    /// mode byte 1 and a snapshot.
    @Test func eventsAndSnapshotsRoundTrip() throws {
        for input in try Self.inputs() {
            guard let mode = input.first else { continue }
            if mode & 1 == 1 {
                guard var engine = try? Engine(snapshot: Array(input.dropFirst()), settings: EngineSettings()) else {
                    continue
                }
                try Self.expectRoundTrip(engine)
                _ = engine.replay(.publish(at: Timestamp(microseconds: 1_709_568_000_000_000)))
                try Self.expectRoundTrip(engine)
                continue
            }
            var engine = Engine(settings: EngineSettings())
            var rest = input.dropFirst()
            while let length = rest.first {
                rest = rest.dropFirst()
                let record = Array(rest.prefix(Int(length)))
                rest = rest.dropFirst(Int(length))
                guard let event = try? EngineEvent(decoding: record) else { continue }
                var writer = ByteWriter()
                event.encode(into: &writer)
                #expect(try EngineEvent(decoding: writer.bytes) == event)
                _ = engine.replay(event)
            }
            try Self.expectRoundTrip(engine)
        }
    }
}
