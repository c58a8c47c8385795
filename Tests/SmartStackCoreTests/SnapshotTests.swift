import SmartStackCore
import Testing

/// Engine snapshots: a restored engine is the same engine — it decides, explains and goes on exactly as the one
/// that was saved, over seeded random workloads cut at random points.
@Suite("Engine snapshots")
struct SnapshotTests {
    typealias F = Fixture

    static func decisions(_ engine: Engine, at times: [Timestamp]) throws -> [Decision] {
        try times.flatMap { time in try engine.stackIDs.map { try engine.evaluate(stack: $0, at: time) } }
    }

    static func explanations(_ engine: Engine, at time: Timestamp) throws -> [StackExplanation] {
        try engine.stackIDs.map { try engine.explain(stack: $0, instance: nil, at: time) }
    }

    @Test(
        "restored at a random cut, the engine continues exactly as the original", arguments: [1, 2, 3, 4] as [UInt64])
    func restoredEngineContinuesExactly(seed: UInt64) throws {
        let events = EngineInvariantTests.workload(seed: seed, events: 900)
        var random = SeededGenerator(seed: seed &* 7_919)
        let cut = Int.random(in: events.count / 4..<events.count * 3 / 4, using: &random)
        var original = Engine()
        for event in events[..<cut] { original.step(event) }
        let bytes = original.snapshot()
        var restored = try Engine(snapshot: bytes, settings: original.settings)
        #expect(restored.snapshot() == bytes, "a restored engine saves the same bytes")
        let time = original.now
        let times = [time, time.adding(seconds: 600), time.adding(seconds: 86_400)]
        #expect(try Self.decisions(restored, at: times) == Self.decisions(original, at: times))
        #expect(try Self.explanations(restored, at: time) == Self.explanations(original, at: time))
        for event in events[cut...] {
            let a = original.step(event)
            let b = restored.step(event)
            switch (a, b) {
            case (.success(let x), .success(let y)):
                #expect(x.decisions == y.decisions)
                #expect(x.effects == y.effects)
            case (.failure(let x), .failure(let y)):
                #expect(x == y)
            default:
                Issue.record("one engine took \(event), the other did not")
            }
        }
        #expect(restored.snapshot() == original.snapshot())
    }

    @Test("a snapshot taken under other settings, of another format or damaged is refused")
    func refusals() throws {
        var engine = Engine()
        for event in EngineInvariantTests.workload(seed: 9, events: 200) { engine.step(event) }
        let bytes = engine.snapshot()
        var other = EngineSettings()
        other.reloadBudget = 40
        #expect(throws: CodecError.self) { try Engine(snapshot: bytes, settings: other) }
        var future = bytes
        future[4] = 99
        #expect(throws: CodecError.self) { try Engine(snapshot: future, settings: engine.settings) }
        #expect(throws: CodecError.self) { try Engine(snapshot: Array(bytes.dropLast()), settings: engine.settings) }
        #expect(throws: CodecError.self) { try Engine(snapshot: [], settings: engine.settings) }
    }
}
