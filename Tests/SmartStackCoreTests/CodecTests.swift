import SmartStackCore
import Testing

/// The storage codec: every event reads back equal, and damaged bytes are errors, never crashes.
@Suite("Byte codec for stored events")
struct CodecTests {
    typealias F = Fixture

    static func roundTrip(_ event: EngineEvent) throws -> EngineEvent {
        try EngineEvent(decoding: event.encoded)
    }

    /// One event of every case, with every configuration value type and optional field set.
    static var everyCase: [EngineEvent] {
        get throws {
            let intent = try IntentSchema(
                type: "ShowCity",
                parameters: [
                    ParameterSchema(
                        name: "city", type: .entity, title: "City", defaultValue: .entity(id: "sf", displayName: "SF"),
                        suggestedEntities: [EntityOption(id: "sf", displayName: "SF")]),
                    ParameterSchema(
                        name: "units", type: .enumeration, optional: true,
                        cases: [EnumCase(id: "c", displayName: "Celsius"), EnumCase(id: "f", displayName: "F")]),
                    ParameterSchema(name: "count", type: .int, defaultValue: .int(-3)),
                    ParameterSchema(name: "ratio", type: .decimal, optional: true),
                    ParameterSchema(name: "on", type: .bool, optional: true),
                    ParameterSchema(name: "when", type: .date, optional: true),
                    ParameterSchema(name: "span", type: .duration, optional: true),
                    ParameterSchema(name: "link", type: .url, optional: true),
                    ParameterSchema(name: "size", type: .measurement, optional: true),
                    ParameterSchema(name: "price", type: .currency, optional: true),
                    ParameterSchema(name: "note", type: .string, optional: true),
                ])
            let kind = try WidgetKind(
                id: F.kindID("weather", "forecast"), displayName: "Forecast ☀︎",
                families: [.systemSmall, .systemMedium],
                intent: intent,
                predictionMappings: [PredictionMapping(intentType: "OpenCity", parameters: ["place": "city"])])
            let values: [String: ConfigurationValue] = [
                "city": .entity(id: "ny", displayName: nil), "units": .enumCase("c"), "count": .int(Int64.min),
                "ratio": .decimal(-0.125), "on": .bool(true), "when": .date(F.t(-86_400)),
                "span": .duration(seconds: 90),
                "link": .url("https://example.com/a?b"), "size": .measurement(value: 1.5e300, unit: "km"),
                "price": .currency(amount: 9.99, code: "EUR"), "note": .string(""),
            ]
            let placement = WidgetPlacement(instance: F.instance("w1"), kind: kind.id, configuration: values)
            return [
                .registerKind(kind, at: F.t(1)),
                .registerKind(F.kind("mail"), at: F.t(1)),
                .configureStack(
                    StackConfiguration(
                        id: F.stack("home"), family: .systemMedium, widgets: [placement], smartRotate: false,
                        suggestions: false, pinned: F.instance("w1"), developerMode: true, liveActivities: false),
                    at: F.t(2)),
                .removeStack(F.stack("gone"), at: F.t(3)),
                .donate(
                    Donation(
                        id: "d-1", app: F.app("mail"), intent: "open", parameters: ["a": "1", "ü": "ß"], date: F.t(4),
                        groupId: "g")),
                .donate(
                    Donation(
                        id: "d-2", app: F.app("mail"), intent: "open",
                        date: Timestamp(microseconds: -5, utcOffsetSeconds: 3_600))),
                .submitTimeline(
                    .instance(F.instance("w1")),
                    F.timeline([(5, 3, 60), (900, nil, 0), (1_800, -1, 0)], policy: .atEnd),
                    at: F.t(5)),
                .submitTimeline(.configuration(kind.id, values), F.timeline([(5, 1, 0)], policy: .never), at: F.t(6)),
                .submitTimeline(
                    .instance(F.instance("w1")),
                    try Timeline.validated(entries: [TimelineEntry(date: F.t(7))], policy: .after(F.t(99))).timeline,
                    at: F.t(7)),
                .declareRelevance(
                    RelevanceDeclaration(
                        target: .instance(F.instance("w1")),
                        contexts: [.dateInterval(start: F.t(0), end: F.t(10)), .context(key: "focus", value: "work")],
                        group: "weather"),
                    at: F.t(8)),
                .declareRelevance(RelevanceDeclaration(target: .configuration(kind.id, [:]), contexts: []), at: F.t(8)),
                .reloadTimelines(app: F.app("mail"), kind: "main", at: F.t(9)),
                .reloadTimelines(app: F.app("mail"), kind: nil, at: F.t(9)),
                .engage(
                    stack: F.stack("home"), instance: F.instance("w1"), kind: .impression, duration: 2.5, at: F.t(10)),
                .engage(
                    stack: F.stack("home"), instance: F.instance("w1"), kind: .swipeAway, duration: nil, at: F.t(10)),
                .look(stack: F.stack("home"), at: F.t(11)),
                .setContext(key: "focus", value: "work", at: F.t(12)),
                .setContext(key: "focus", value: nil, at: F.t(12)),
                .startLiveActivity(
                    app: F.app("mail"), id: "la", attributes: ["k": "v"], contentState: ["s": "1"], at: F.t(13)),
                .updateLiveActivity(app: F.app("mail"), id: "la", contentState: [:], at: F.t(14)),
                .endLiveActivity(app: F.app("mail"), id: "la", contentState: ["s": "2"], dismissAfter: 60, at: F.t(15)),
                .endLiveActivity(app: F.app("mail"), id: "la", contentState: nil, dismissAfter: nil, at: F.t(16)),
            ]
        }
    }

    @Test("every event case reads back equal, offsets included")
    func everyCaseRoundTrips() throws {
        for event in try Self.everyCase {
            let back = try Self.roundTrip(event)
            #expect(back == event)
            #expect(back.time.utcOffsetSeconds == event.time.utcOffsetSeconds)
        }
    }

    @Test("seeded random workloads read back equal", arguments: [1, 2, 3] as [UInt64])
    func randomWorkloads(seed: UInt64) throws {
        for event in EngineInvariantTests.workload(seed: seed, events: 400) {
            #expect(try Self.roundTrip(event) == event)
        }
    }

    @Test("equal dictionaries give equal bytes (keys sorted)")
    func deterministicBytes() {
        let a = Donation(
            id: "x", app: F.app("a"), intent: "i", parameters: ["b": "2", "a": "1", "c": "3"], date: F.t(0))
        var parameters: [String: String] = [:]
        for (key, value) in [("c", "3"), ("a", "1"), ("b", "2")] { parameters[key] = value }
        let b = Donation(id: "x", app: F.app("a"), intent: "i", parameters: parameters, date: F.t(0))
        #expect(EngineEvent.donate(a).encoded == EngineEvent.donate(b).encoded)
    }

    @Test("every truncation and a trailing byte are errors")
    func damagedBytes() throws {
        for event in try Self.everyCase {
            let bytes = event.encoded
            for length in 0..<bytes.count {
                let prefix = Array(bytes[0..<length])
                #expect(throws: CodecError.self) { try EngineEvent(decoding: prefix) }
            }
            let longer = bytes + [0]
            #expect(throws: CodecError.self) { try EngineEvent(decoding: longer) }
        }
    }

    @Test("an unknown case byte and invalid identifiers are errors")
    func invalidValues() {
        #expect(throws: CodecError.self) { try EngineEvent(decoding: [UInt8(200)]) }
        // .removeStack with an empty stack id.
        var writer = ByteWriter()
        writer.byte(3)
        writer.string("")
        writer.timestamp(F.t(0))
        #expect(throws: CodecError.self) { try EngineEvent(decoding: writer.bytes) }
    }

    @Test("a stored NaN is an error, not a value that equals nothing (found by fuzz-codec)")
    func notANumber() {
        let event = EngineEvent.engage(
            stack: F.stack("home"), instance: F.instance("w1"), kind: .tap, duration: .nan, at: F.t(0))
        var writer = ByteWriter()
        event.encode(into: &writer)
        #expect(throws: CodecError.self) { try EngineEvent(decoding: writer.bytes) }
        let fine = EngineEvent.engage(
            stack: F.stack("home"), instance: F.instance("w1"), kind: .tap, duration: 2.5, at: F.t(0))
        var again = ByteWriter()
        fine.encode(into: &again)
        #expect((try? EngineEvent(decoding: again.bytes)) == fine)
    }

    @Test("integers and doubles round trip at their extremes")
    func primitives() throws {
        var writer = ByteWriter()
        let integers: [Int64] = [0, 1, -1, 63, -64, 64, Int64.max, Int64.min]
        let doubles: [Double] = [0, -0.0, .pi, -.infinity, .greatestFiniteMagnitude, .leastNonzeroMagnitude]
        for value in integers { writer.int(value) }
        for value in doubles { writer.double(value) }
        writer.uint(UInt64.max)
        try writer.bytes.withUnsafeBytes { buffer in
            var reader = ByteReader(buffer)
            for value in integers { #expect(try reader.int() == value) }
            for value in doubles { #expect(try reader.double().bitPattern == value.bitPattern) }
            #expect(try reader.uint() == UInt64.max)
            try reader.expectEnd()
        }
    }

    @Test("an array is read into room for exactly its elements; a damaged count reserves nothing and is an error")
    func arraysAreSizedByTheirCount() throws {
        var writer = ByteWriter()
        let values = (0..<100).map { Double($0) / 3 }
        writer.array(values) { $0.double($1) }
        try writer.bytes.withUnsafeBytes { buffer in
            var reader = ByteReader(buffer)
            let read = try reader.array { reader throws(CodecError) in try reader.double() }
            #expect(read == values)
            // Appended one at a time, 100 doubles had room for 128 or more.
            #expect(read.capacity < 110, "room for \(read.capacity)")
            try reader.expectEnd()
        }
        // A count of 2^29 elements in front of 16 bytes: no reservation of 4 GiB, and the read fails where the bytes
        // end.
        var damaged = ByteWriter()
        damaged.uint(1 << 29)
        damaged.double(1)
        damaged.double(2)
        damaged.bytes.withUnsafeBytes { buffer in
            var reader = ByteReader(buffer)
            #expect(reader.capacity(for: 1 << 29, of: Double.self) == 0)
            #expect(reader.capacity(for: 2, of: Double.self) == 2)
            #expect(throws: CodecError.self) { try reader.array { reader throws(CodecError) in try reader.double() } }
        }
    }
}
