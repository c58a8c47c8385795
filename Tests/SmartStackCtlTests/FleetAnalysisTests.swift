import SmartStackAnalysis
import SmartStackProtocol
import Testing

/// Records of several machines (as systemd-journal-remote collects them): analysed per machine, then merged.
struct FleetAnalysisTests {
    static let second: Int64 = 1_000_000
    static let t0: Int64 = 1_763_712_000 * second
    static let car = "0123456789abcdef0123456789abcdef"
    static let kiosk = "fedcba9876543210fedcba9876543210"

    static func order(
        _ at: Int64, _ machine: String, _ host: String, _ order: [String], previous: [String] = [], count: Int = 1
    ) -> DecisionRecord {
        DecisionRecord(
            time: t0 + at * second,
            event: .orderChanged(.init(stack: "home", order: order, previousOrder: previous, count: count)),
            machineID: machine, hostname: host)
    }

    /// Both machines have a stack `home` with the same widgets; interleaved in time they must not mix.
    static let records: [DecisionRecord] = [
        order(0, car, "car", ["mail", "news"]),
        order(5, kiosk, "kiosk", ["news", "mail"]),
        order(10, car, "car", ["news", "mail"], previous: ["mail", "news"], count: 2),
        order(20, kiosk, "kiosk", ["mail", "news"], previous: ["news", "mail"]),
        order(30, car, "car", ["mail", "news"], previous: ["news", "mail"]),
        DecisionRecord(
            time: t0 + 35 * second, event: .reloadRequested(widget: "news", reason: "timelineEnded"),
            machineID: kiosk, hostname: "kiosk"),
    ]

    @Test func perMachineAndMerged() throws {
        let report = Analyzer().analyzeFleet(Self.records)
        #expect(report.machines.map(\.label) == ["car", "kiosk"])
        let car = try #require(report.machines.first)
        #expect(car.machineID == Self.car)
        #expect((car.entries.orderChanged, car.stacks, car.decisions, car.topChanges) == (3, 1, 3, 2))
        #expect(car.first == Self.t0 && car.last == Self.t0 + 30 * Self.second)
        let kiosk = try #require(report.machines.last)
        #expect((kiosk.entries.orderChanged, kiosk.entries.reloadRequested, kiosk.topChanges) == (2, 1, 1))
        #expect(report.entries.orderChanged == 5 && report.entries.reloadRequested == 1)
        // Two stacks, not one `home` whose top flips at every entry of either machine.
        #expect(report.stacks.map(\.stack) == ["car/home", "kiosk/home"])
        #expect(report.stacks.map(\.topChanges) == [2, 1])
        #expect(report.stacks.map(\.changes) == [4, 2])
        #expect(Set(report.widgets.map(\.stack)) == ["car/home", "kiosk/home"])
        #expect(report.start == Self.t0 && report.end == Self.t0 + 35 * Self.second)
    }

    @Test func oneMachineIsTheMachinesOwnReport() throws {
        let carRecords = Self.records.filter { $0.machineID == Self.car }
        var alone = Analyzer().analyze(carRecords)
        let fleet = Analyzer().analyzeFleet(carRecords)
        #expect(fleet.machines.count == 1)
        alone.machines = fleet.machines
        #expect(fleet == alone)
        #expect(fleet.stacks.map(\.stack) == ["home"])
    }

    @Test func machineFilterByHostnameIdOrPrefix() throws {
        for selector in ["kiosk", Self.kiosk, "fedcba98", "FEDCBA9876"] {
            let report = Analyzer().analyzeFleet(Self.records, machine: selector)
            #expect(report.entries.orderChanged == 2, "\(selector)")
            #expect(report.stacks.map(\.stack) == ["home"])
            #expect(report.machines.count == 2)
        }
        // A prefix shorter than 8 digits names nothing.
        let short = Analyzer().analyzeFleet(Self.records, machine: "fedc")
        #expect(short.entries.total == 0)
        #expect(short.notes.first == "no machine matches 'fedc' (machines read: car, kiosk)")
    }

    @Test func hostnamesSharedOrMissingGetDistinctLabels() throws {
        let records = [
            Self.order(0, Self.car, "pi", ["a"]), Self.order(1, Self.kiosk, "pi", ["b"]),
            Self.order(2, "00112233445566778899aabbccddeeff", "", ["c"]),
        ]
        let labels = Analyzer().analyzeFleet(records).machines.map(\.label)
        #expect(labels == ["001122334455", "pi(01234567)", "pi(fedcba98)"])
    }

    @Test func jsonHasTheMachineTable() throws {
        let object = Analyzer().analyzeFleet(Self.records).jsonObject
        let machines = try #require(object["machines"]?.arrayValue)
        #expect(machines.count == 2)
        let first = try #require(machines.first?.objectValue)
        #expect(first["label"] == .string("car"))
        #expect(first["machineID"] == .string(Self.car))
        #expect(first["entries"]?.objectValue?["total"] == .int(3))
    }

    @Test func htmlHasTheMachineTable() throws {
        let html = HTMLReport(report: Analyzer().analyzeFleet(Self.records), source: "test").render()
        #expect(html.contains("<h2>Machines</h2>"))
        #expect(html.contains("<td>car</td><td>\(Self.car)</td><td>3</td>"))
    }
}
