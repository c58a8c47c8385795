// libFuzzer target (c): the stored event codec and engine snapshots, the bytes smartstackd reads back from its
// database at start-up. Built for fuzzing only by `make fuzz` (-DSMARTSTACK_FUZZ, -sanitize=fuzzer,address);
// the normal build makes the seed generator (`fuzz-codec seeds DIR`). See docs/fuzzing.md.
import SmartStackCore

/// The input's layout: the first byte's low bit chooses events (0) or a snapshot (1). Events follow as records,
/// each a length byte then that many bytes of one encoded event; a snapshot is the rest of the input.
enum CodecInput {
    static let events: UInt8 = 0
    static let snapshot: UInt8 = 1

    static func events(_ events: [EngineEvent]) -> [UInt8] {
        var bytes = [Self.events]
        for event in events {
            var writer = ByteWriter()
            event.encode(into: &writer)
            // A record longer than a length byte can say is left out (the seeds' events are short).
            guard writer.bytes.count <= Int(UInt8.max) else { continue }
            bytes.append(UInt8(writer.bytes.count))
            bytes += writer.bytes
        }
        return bytes
    }

    static func snapshot(_ engine: Engine) -> [UInt8] { [Self.snapshot] + engine.snapshot() }
}

#if canImport(Glibc)
    import Glibc
#endif

#if SMARTSTACK_FUZZ
    import FuzzSupport

    /// SwiftPM links an executable's entry point as `<module>_main`: it hands over to libFuzzer (`runLibFuzzer`).
    @_cdecl("fuzz_codec_main")
    public func fuzzCodecMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
        if argc == 3, let mode = argv[1], String(cString: mode) == "seeds" {
            return FuzzCodecSeeds.write(CommandLine.arguments)
        }
        return runLibFuzzer(argc, argv) { start, size in fuzzCodec(start, size) }
    }

    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzCodec(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
        let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
        guard let mode = bytes.first else { return 0 }
        if mode & 1 == CodecInput.snapshot {
            CodecFuzzer.snapshot(Array(bytes.dropFirst()))
        } else {
            CodecFuzzer.events(bytes.dropFirst())
        }
        return 0
    }

    enum CodecFuzzer {
        static let settings = EngineSettings()

        /// Decodes each record as one stored event and replays what decodes (as a restart does); a decoded event
        /// must encode and decode to itself, and the engine reached must survive its own snapshot.
        static func events(_ bytes: ArraySlice<UInt8>) {
            var engine = Engine(settings: settings)
            var rest = bytes
            while let length = rest.first {
                rest = rest.dropFirst()
                let record = Array(rest.prefix(Int(length)))
                rest = rest.dropFirst(Int(length))
                guard let event = try? EngineEvent(decoding: record) else { continue }
                var writer = ByteWriter()
                event.encode(into: &writer)
                guard let again = try? EngineEvent(decoding: writer.bytes), again == event else {
                    fatalError("an event does not survive encoding: \(event)")
                }
                _ = engine.replay(event)
            }
            roundTrip(engine)
        }

        /// Decodes the bytes as a snapshot; an engine that decodes must survive its own snapshot and keep working.
        static func snapshot(_ bytes: [UInt8]) {
            guard var engine = try? Engine(snapshot: bytes, settings: settings) else { return }
            roundTrip(engine)
            _ = engine.replay(.publish(at: Timestamp(microseconds: 1_709_568_000_000_000)))
            roundTrip(engine)
        }

        static func roundTrip(_ engine: Engine) {
            let bytes = engine.snapshot()
            let restored: Engine
            do {
                restored = try Engine(snapshot: bytes, settings: settings)
            } catch {
                fatalError("an engine's own snapshot does not decode: \(error)")
            }
            guard restored.snapshot() == bytes else { fatalError("a snapshot changed through decoding") }
        }
    }
#else
    /// Without the fuzzing build this writes the target's seed corpus: `fuzz-codec seeds DIR`.
    @main enum FuzzCodecMain {
        static func main() { exit(FuzzCodecSeeds.write(CommandLine.arguments)) }
    }
#endif

/// Writes the seed corpus: `fuzz-codec seeds DIR`.
enum FuzzCodecSeeds {
    static func write(_ arguments: [String]) -> CInt {
        guard arguments.count == 3, arguments[1] == "seeds" else {
            print("usage: fuzz-codec seeds DIR   (the libFuzzer target itself is built by `make fuzz`)")
            return 2
        }
        do {
            for (name, bytes) in try CodecSeeds.all() {
                try write(bytes, to: arguments[2] + "/" + name)
            }
        } catch {
            print("fuzz-codec: \(error)")
            return 1
        }
        return 0
    }

    static func write(_ bytes: [UInt8], to path: String) throws {
        guard let file = fopen(path, "wb") else { throw CodecError("cannot write \(path)") }
        defer { fclose(file) }
        guard fwrite(bytes, 1, bytes.count, file) == bytes.count else { throw CodecError("cannot write \(path)") }
    }
}

/// Real stored events and snapshots: a small session of every event kind, as the service logs them.
enum CodecSeeds {
    static let start = Timestamp(microseconds: 1_709_568_000_000_000, utcOffsetSeconds: -8 * 3_600)

    static func t(_ seconds: Double) -> Timestamp { start.adding(seconds: seconds) }

    static func session() throws -> [EngineEvent] {
        let app = try AppID("com.example.weather")
        let other = try AppID("com.example.mail")
        let kind = try WidgetKindID(app: app, kind: "main")
        let mailKind = try WidgetKindID(app: other, kind: "inbox")
        let stack = try StackID("home")
        let instance = try InstanceID("weather-1")
        let mail = try InstanceID("mail-1")
        let timeline = try Timeline.validated(
            entries: [
                TimelineEntry(date: t(60), relevance: Relevance(score: 0.8, duration: 600)),
                TimelineEntry(date: t(3_600)),
            ],
            policy: .atEnd
        ).timeline
        return [
            .publish(at: t(0)),
            .registerKind(
                try WidgetKind(
                    id: kind, displayName: "Weather", families: [.systemMedium, .systemSmall], intent: nil,
                    predictionMappings: []),
                at: t(0)),
            .registerKind(
                try WidgetKind(
                    id: mailKind, displayName: "Mail", families: [.systemMedium], intent: nil,
                    predictionMappings: []),
                at: t(0)),
            .configureStack(
                StackConfiguration(
                    id: stack, family: .systemMedium,
                    widgets: [
                        WidgetPlacement(instance: instance, kind: kind),
                        WidgetPlacement(instance: mail, kind: mailKind),
                    ],
                    smartRotate: true),
                at: t(1)),
            .publish(at: t(1)),
            .donate(
                Donation(
                    id: "d1", app: app, intent: "open", parameters: ["city": "Paris"], date: t(10),
                    groupId: "g")),
            .donate(Donation(id: "d2", app: other, intent: "compose", date: t(20))),
            .submitTimeline(.instance(instance), timeline, at: t(30)),
            .reloadTimelines(app: app, kind: "main", at: t(40)),
            .look(stack: stack, at: t(50)),
            .engage(stack: stack, instance: mail, kind: .tap, duration: 12, at: t(55)),
            .setContext(key: "location", value: "home", at: t(60)),
            .startLiveActivity(
                app: app, id: "storm", attributes: ["kind": "storm"], contentState: ["eta": "5"], at: t(70)),
            .updateLiveActivity(app: app, id: "storm", contentState: ["eta": "2"], at: t(80)),
            .endLiveActivity(app: app, id: "storm", contentState: nil, dismissAfter: 60, at: t(90)),
            .removeStack(stack, at: t(100)),
            .publish(at: t(100)),
        ]
    }

    static func all() throws -> [(String, [UInt8])] {
        let events = try session()
        var seeds: [(String, [UInt8])] = [("events-session", CodecInput.events(events))]
        for (index, event) in events.enumerated() {
            seeds.append(("event-\(index)", CodecInput.events([event])))
        }
        // Snapshots: an empty engine, and the session before and after its stack is removed.
        seeds.append(("snapshot-empty", CodecInput.snapshot(Engine())))
        var engine = Engine()
        for (index, event) in events.enumerated() {
            _ = engine.replay(event)
            if index == 11 { seeds.append(("snapshot-session", CodecInput.snapshot(engine))) }
        }
        seeds.append(("snapshot-after-removal", CodecInput.snapshot(engine)))
        return seeds
    }
}
