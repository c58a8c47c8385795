// smartstack-bench: measures the ranking engine against the issue's performance requirement.
//
//   "1,000 stacks of 10 widgets, 1,000,000 donations: median cost per donation ≤ 2 µs and per
//    10-widget stack query ≤ 10 µs; resident memory after 1,000,000 donations within 10% of that
//    after 100,000 (state is aggregates, not event lists)."
//
// Usage: smartstack-bench [--runs N] [--stacks N] [--widgets N] [--donations N] [--apps N] [--json]
//                         [--batch N] [--queries N] [--query-batch N] [--look-every N] [--mem-at N]
//                         [--zipf S] [--seed N]
//
// Each run builds a fresh engine in this process (the previous run's engine is dropped and
// `malloc_trim(0)` hands its freed pages back to the kernel first, so resident memory starts clean):
//
// 1. Setup: `apps` apps, each with one kind `main` (no configuration intent, no prediction mappings, so
//    every donation of the app matches it). `stacks` stacks of `widgets` distinct apps each, drawn from a
//    Zipf(s) popularity with a seeded SplitMix64, so popular apps sit in many stacks. Instance ids are
//    unique per stack (`s17.w3`).
// 2. Donations: `donations` donations (`open`, unique ids) from apps drawn with the same skew, 1–120 s
//    apart (uniform), local offset -08:00, starting 2024-01-01. They are applied in batches of `batch`;
//    each batch's events are built before its timer starts, so only `Engine.apply` is timed.
//    Looks: before a donation, with probability 1/`look-every`, a `.look(stack:at:)` at a uniformly
//    random stack is applied (half-way between the previous donation and this one, so the donation
//    closes the look within the outcome window and the stack's ranker learns). Each look is timed on
//    its own and its time is subtracted from the batch, so the donation figure is donations only; the
//    learning step a look triggers runs inside the next donation and is counted there (it is part of
//    what a donation costs). Per-donation cost of a run = median over its batches of batch time / size.
// 3. Memory: resident set size (VmRSS of /proc/self/status) and malloc's bytes in use (from glibc's
//    `malloc_info`, which tells allocator retention from real growth) after `mem-at` donations (default
//    donations / 10) and after all of them, both in the same run.
// 4. Queries: after the donations, `queries` `evaluate(stack:at:)` calls on uniformly random stacks,
//    one minute after the last donation, timed in batches of `query-batch`; per-query cost of a run =
//    median over batches. For information, the same for `commit(stack:at:)` (evaluate + publish).
//
// Every cost is read on two clocks: wall time (CLOCK_MONOTONIC; the verdicts use it) and the thread's
// CPU time (CLOCK_THREAD_CPUTIME_ID; it leaves out time the thread was descheduled, so it is the steadier
// reading when the machine is busy). The summary is the median of the runs' figures, with min and max.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SmartStackCore

// MARK: Options

struct Options {
    var runs = 5
    var stacks = 1_000
    var widgets = 10
    var donations = 1_000_000
    var apps = 200
    var json = false
    var batch = 10_000
    var queries = 10_000
    var queryBatch = 1_000
    var lookEvery = 50
    var memAt: Int?
    var zipf = 1.0
    var seed: UInt64 = 0x5EED_2024

    var memoryCheckpoint: Int { memAt ?? max(1, donations / 10) }

    static let usage = """
        usage: smartstack-bench [--runs N (5)] [--stacks N (1000)] [--widgets N (10)] [--donations N (1000000)]
                                [--apps N (200)] [--json] [--batch N (10000)] [--queries N (10000)]
                                [--query-batch N (1000)] [--look-every N (50; 0 = no looks)]
                                [--mem-at N (donations/10)] [--zipf S (1.0)] [--seed N]
        """

    static func parse(_ arguments: [String]) throws(BenchError) -> Options {
        var options = Options()
        var index = 0
        func value(_ name: String) throws(BenchError) -> String {
            index += 1
            guard index < arguments.count else { throw BenchError("\(name) needs a value") }
            return arguments[index]
        }
        func integer(_ name: String, minimum: Int) throws(BenchError) -> Int {
            let text = try value(name)
            guard let number = Int(text.replacingUnderscores), number >= minimum else {
                throw BenchError("\(name) needs an integer ≥ \(minimum), got '\(text)'")
            }
            return number
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "--runs": options.runs = try integer(argument, minimum: 1)
            case "--stacks": options.stacks = try integer(argument, minimum: 1)
            case "--widgets": options.widgets = try integer(argument, minimum: 1)
            case "--donations": options.donations = try integer(argument, minimum: 1)
            case "--apps": options.apps = try integer(argument, minimum: 1)
            case "--batch": options.batch = try integer(argument, minimum: 1)
            case "--queries": options.queries = try integer(argument, minimum: 1)
            case "--query-batch": options.queryBatch = try integer(argument, minimum: 1)
            case "--look-every": options.lookEvery = try integer(argument, minimum: 0)
            case "--mem-at": options.memAt = try integer(argument, minimum: 1)
            case "--seed": options.seed = UInt64(try integer(argument, minimum: 0))
            case "--zipf":
                let text = try value(argument)
                guard let s = Double(text), s >= 0, s.isFinite else { throw BenchError("--zipf needs a number ≥ 0") }
                options.zipf = s
            case "--json": options.json = true
            case "-h", "--help":
                print(usage)
                exit(0)
            default: throw BenchError("unknown argument '\(argument)'\n\(usage)")
            }
            index += 1
        }
        guard options.widgets <= options.apps else {
            throw BenchError("--widgets (\(options.widgets)) must not exceed --apps (\(options.apps)): a stack's apps are distinct")
        }
        guard options.memoryCheckpoint <= options.donations else {
            throw BenchError("--mem-at must not exceed --donations")
        }
        return options
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension String {
    var replacingUnderscores: String { String(filter { $0 != "_" && $0 != "," }) }
}

// MARK: Randomness

extension SeededGenerator {
    /// Uniform in [0, 1).
    mutating func unit() -> Double { Double(next() >> 11) * 0x1.0p-53 }

    /// Uniform in 0..<n.
    mutating func below(_ n: Int) -> Int { Int.random(in: 0..<n, using: &self) }
}

/// Draws ranks 0..<n with probability ∝ 1 / (rank + 1)^s.
struct ZipfSampler {
    let cumulative: [Double]

    init(count: Int, exponent: Double) {
        var total = 0.0
        var cumulative: [Double] = []
        cumulative.reserveCapacity(count)
        for rank in 0..<count {
            total += 1 / pow(Double(rank + 1), exponent)
            cumulative.append(total)
        }
        self.cumulative = cumulative
    }

    func sample(using rng: inout SeededGenerator) -> Int {
        let u = rng.unit() * (cumulative.last ?? 0)
        var low = 0
        var high = cumulative.count - 1
        while low < high {
            let middle = (low + high) / 2
            if cumulative[middle] > u { high = middle } else { low = middle + 1 }
        }
        return low
    }
}

// MARK: Clock and memory

@inline(__always)
func nanoseconds(_ clock: clockid_t) -> UInt64 {
    var spec = timespec()
    clock_gettime(clock, &spec)
    return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
}

/// Both clocks at one moment: wall time (CLOCK_MONOTONIC, what the requirement is judged on) and this
/// thread's CPU time (CLOCK_THREAD_CPUTIME_ID, which leaves out time the thread was descheduled, so it is
/// the steadier reading on a loaded machine).
struct Instant {
    var wall: UInt64
    var cpu: UInt64

    @inline(__always)
    static func now() -> Instant {
        // CPU first and wall last on the way in, the reverse on the way out (`elapsed`), so the wall
        // interval holds no clock call and the CPU interval holds both: subtracting a nested interval
        // (a look) from an enclosing one (its batch) then also removes the nested interval's clock calls.
        let cpu = nanoseconds(CLOCK_THREAD_CPUTIME_ID)
        return Instant(wall: nanoseconds(CLOCK_MONOTONIC), cpu: cpu)
    }

    @inline(__always)
    func elapsed() -> Elapsed {
        let wall = nanoseconds(CLOCK_MONOTONIC)
        let cpu = nanoseconds(CLOCK_THREAD_CPUTIME_ID)
        return Elapsed(wall: Double(wall &- self.wall), cpu: Double(cpu &- self.cpu))
    }
}

struct Elapsed {
    var wall = 0.0
    var cpu = 0.0

    static func += (lhs: inout Elapsed, rhs: Elapsed) {
        lhs.wall += rhs.wall
        lhs.cpu += rhs.cpu
    }

    static func - (lhs: Elapsed, rhs: Elapsed) -> Elapsed { Elapsed(wall: lhs.wall - rhs.wall, cpu: lhs.cpu - rhs.cpu) }
    static func / (lhs: Elapsed, rhs: Int) -> Elapsed { Elapsed(wall: lhs.wall / Double(rhs), cpu: lhs.cpu / Double(rhs)) }
}

/// Per-operation costs of a phase's batches, wall and CPU.
struct Costs {
    var batches: [Elapsed] = []

    mutating func append(_ cost: Elapsed) { batches.append(cost) }
    var wall: Double { medianOf(batches.map(\.wall)) }
    var cpu: Double { medianOf(batches.map(\.cpu)) }
    var wallMin: Double { batches.map(\.wall).min() ?? .nan }
    var wallMax: Double { batches.map(\.wall).max() ?? .nan }
}

/// The 1-minute load average, to show how busy the machine was.
func loadAverage() -> Double {
    var loads = [0.0, 0.0, 0.0]
    return getloadavg(&loads, 3) >= 1 ? loads[0] : .nan
}

struct MemorySample {
    /// Resident set size (VmRSS), bytes.
    var rss: Int
    /// Bytes malloc has handed out and not had back (arena + mmapped chunks).
    var heapInUse: Int
}

enum Memory {
    /// A `/proc/self/status` field in kB (`VmRSS`, `VmHWM`), as bytes.
    static func statusField(_ name: String) -> Int {
        let fd = open("/proc/self/status", O_RDONLY)
        guard fd >= 0 else { return -1 }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes.append(contentsOf: buffer[0..<count])
        }
        let text = String(decoding: bytes, as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix("\(name):") {
            let digits = line.dropFirst(name.count + 1).filter(\.isNumber)
            return (Int(String(digits)) ?? -1) * 1_024
        }
        return -1
    }

    static func sample() -> MemorySample {
        MemorySample(rss: statusField("VmRSS"), heapInUse: heapInUse())
    }

    /// A glibc function the Glibc module does not import (`malloc.h`), looked up at run time.
    static func glibcFunction(_ name: String) -> UnsafeMutableRawPointer? {
        #if canImport(Glibc)
        return dlsym(UnsafeMutableRawPointer(bitPattern: 0), name)  // RTLD_DEFAULT
        #else
        return nil
        #endif
    }

    /// Bytes malloc has handed out and not had back, from `malloc_info`'s totals: the arenas' system
    /// memory less their free chunks (fast bins and the rest), plus mmapped chunks. -1 when unavailable.
    static func heapInUse() -> Int {
        #if canImport(Glibc)
        typealias MallocInfo = @convention(c) (Int32, UnsafeMutablePointer<FILE>?) -> Int32
        guard let symbol = glibcFunction("malloc_info") else { return -1 }
        let mallocInfo = unsafeBitCast(symbol, to: MallocInfo.self)
        var buffer: UnsafeMutablePointer<CChar>?
        var size = 0
        guard let stream = open_memstream(&buffer, &size) else { return -1 }
        _ = mallocInfo(0, stream)
        fclose(stream)
        guard let buffer else { return -1 }
        defer { free(buffer) }
        let xml = String(cString: buffer)
        // The process-wide totals follow the last per-arena `</heap>`.
        guard let range = xml.ranges(of: "</heap>").last else { return -1 }
        var values: [String: Int] = [:]
        for line in xml[range.upperBound...].split(separator: "\n") {
            guard let typeStart = line.firstRange(of: "type=\""), let sizeStart = line.firstRange(of: "size=\"") else { continue }
            let tag = line.split(separator: " ").first.map(String.init) ?? ""
            let type = line[typeStart.upperBound...].prefix { $0 != "\"" }
            let number = line[sizeStart.upperBound...].prefix { $0 != "\"" }
            values[tag + ":" + type] = Int(number)
        }
        guard let current = values["<system:current"] else { return -1 }
        return current - (values["<total:fast"] ?? 0) - (values["<total:rest"] ?? 0) + (values["<total:mmap"] ?? 0)
        #else
        return -1
        #endif
    }

    /// Gives malloc's free pages back to the kernel so that the next run's resident size starts clean.
    static func trim() {
        typealias MallocTrim = @convention(c) (Int) -> Int32
        guard let symbol = glibcFunction("malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
    }
}

// MARK: Statistics and formatting

func medianOf(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// `value` with `decimals` digits after the point (no exponent), right-aligned to `width`.
func fixed(_ value: Double, _ decimals: Int = 1, width: Int = 0) -> String {
    var text: String
    if !value.isFinite {
        text = value.isNaN ? "n/a" : (value > 0 ? "inf" : "-inf")
    } else {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        let whole = Int(scaled / scale)
        let fraction = Int(scaled - Double(whole) * scale)
        text = (value < 0 && scaled != 0 ? "-" : "") + String(whole)
        if decimals > 0 {
            let digits = String(fraction)
            text += "." + String(repeating: "0", count: decimals - digits.count) + digits
        }
    }
    return text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
}

func padded(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}

func mebibytes(_ bytes: Int) -> Double { Double(bytes) / 1_048_576 }

func writeError(_ text: String) {
    let line = text + "\n"
    _ = line.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
}

// MARK: One run

struct RunResult {
    var setupMilliseconds: Double
    var donations: Costs
    var donationsPerSecond: Double
    var looks: Int
    var lookWall: Double
    var queries: Costs
    var commits: Costs
    var memoryBase: MemorySample
    var memoryAfterSetup: MemorySample
    var memoryCheckpoint: MemorySample
    var memoryEnd: MemorySample
    var checkpointDonations: Int
    var peakRSS: Int
    var simulatedDays: Double
    var checksum: Int

    var rssRatio: Double { Double(memoryEnd.rss) / Double(memoryCheckpoint.rss) }
    var heapRatio: Double { Double(memoryEnd.heapInUse) / Double(memoryCheckpoint.heapInUse) }
    /// Growth from the checkpoint to the end relative to what the engine added to the process by the
    /// checkpoint (RSS at the checkpoint less RSS before the engine was built).
    var rssGrowthOverEngine: Double {
        Double(memoryEnd.rss - memoryCheckpoint.rss) / Double(memoryCheckpoint.rss - memoryBase.rss)
    }
}

/// The fixed population of a benchmark: apps, kinds, stacks (identical in every run).
struct Population {
    var apps: [AppID]
    var kinds: [WidgetKind]
    var stacks: [StackConfiguration]
    var stackIDs: [StackID]
    var popularity: ZipfSampler

    init(options: Options) throws {
        let popularity = ZipfSampler(count: options.apps, exponent: options.zipf)
        let apps = try (0..<options.apps).map { try AppID("com.example.app\($0 + 1)") }
        let kinds = try apps.enumerated().map { index, app in
            try WidgetKind(
                id: WidgetKindID(app: app, kind: "main"), displayName: "App \(index + 1)", families: [.systemMedium])
        }
        var rng = SeededGenerator(seed: options.seed)
        var stacks: [StackConfiguration] = []
        for s in 0..<options.stacks {
            var chosen: [Int] = []
            var seen = Set<Int>()
            while chosen.count < options.widgets {
                let app = popularity.sample(using: &rng)
                if seen.insert(app).inserted { chosen.append(app) }
            }
            let id = try StackID("s\(s + 1)")
            let widgets = try chosen.enumerated().map { w, app in
                WidgetPlacement(instance: try InstanceID("s\(s + 1).w\(w + 1)"), kind: kinds[app].id)
            }
            stacks.append(StackConfiguration(id: id, family: .systemMedium, widgets: widgets))
        }
        self.popularity = popularity
        self.apps = apps
        self.kinds = kinds
        self.stacks = stacks
        stackIDs = stacks.map(\.id)
    }

    /// How many stacks each app is placed in, most popular first (for the report).
    var placementsPerApp: [Int] {
        var counts = Array(repeating: 0, count: apps.count)
        var index: [WidgetKindID: Int] = [:]
        for (i, kind) in kinds.enumerated() { index[kind.id] = i }
        for stack in stacks {
            for widget in stack.widgets { if let i = index[widget.kind] { counts[i] += 1 } }
        }
        return counts
    }
}

/// 2024-01-01T00:00:00-08:00.
let startMicroseconds: Int64 = (1_704_067_200 + 8 * 3_600) * 1_000_000
let utcOffset: Int32 = -8 * 3_600

func timestamp(_ microseconds: Int64) -> Timestamp {
    Timestamp(microseconds: microseconds, utcOffsetSeconds: utcOffset)
}

func run(population: Population, options: Options) throws -> RunResult {
    Memory.trim()
    let memoryBase = Memory.sample()
    // The same donation stream every run: runs differ only in timing noise.
    var rng = SeededGenerator(seed: options.seed ^ 0xD0_9A71_0175)

    var settings = EngineSettings()
    settings.maxStacks = max(settings.maxStacks, options.stacks)
    settings.maxWidgetsPerStack = max(settings.maxWidgetsPerStack, options.widgets)
    settings.maxKinds = max(settings.maxKinds, options.apps)
    var engine = Engine(settings: settings)

    var clock = startMicroseconds
    let setupStart = Instant.now()
    for kind in population.kinds { try engine.apply(.registerKind(kind, at: timestamp(clock))) }
    for stack in population.stacks { try engine.apply(.configureStack(stack, at: timestamp(clock))) }
    let setupMilliseconds = setupStart.elapsed().wall / 1e6
    let memoryAfterSetup = Memory.sample()

    // Donations (and looks), in batches.
    var donationCosts = Costs()
    var lookCosts: [Double] = []
    var events: [Donation] = []
    events.reserveCapacity(options.batch)
    /// For each event of the batch, the stack to look at just before it (nil: none) and when.
    var looksBefore: [(stack: Int, time: Int64)?] = []
    looksBefore.reserveCapacity(options.batch)
    var done = 0
    var looks = 0
    var memoryCheckpoint: MemorySample?
    var checkpointDonations = 0
    var donationWall = 0.0
    while done < options.donations {
        let size = min(options.batch, options.donations - done)
        events.removeAll(keepingCapacity: true)
        looksBefore.removeAll(keepingCapacity: true)
        for i in 0..<size {
            let gap = Int64(1 + rng.below(120)) * 1_000_000
            if options.lookEvery > 0, rng.below(options.lookEvery) == 0 {
                looksBefore.append((rng.below(population.stackIDs.count), clock + gap / 2))
            } else {
                looksBefore.append(nil)
            }
            clock += gap
            let app = population.apps[population.popularity.sample(using: &rng)]
            events.append(Donation(id: "d\(done + i + 1)", app: app, intent: "open", date: timestamp(clock)))
        }

        var lookTime = Elapsed()
        let start = Instant.now()
        for i in 0..<size {
            if let look = looksBefore[i] {
                let lookStart = Instant.now()
                try engine.apply(.look(stack: population.stackIDs[look.stack], at: timestamp(look.time)))
                let elapsed = lookStart.elapsed()
                lookTime += elapsed
                lookCosts.append(elapsed.wall)
                looks += 1
            }
            try engine.apply(.donate(events[i]))
        }
        let elapsed = start.elapsed() - lookTime
        donationWall += elapsed.wall
        donationCosts.append(elapsed / size)
        done += size
        if memoryCheckpoint == nil, done >= options.memoryCheckpoint {
            memoryCheckpoint = Memory.sample()
            checkpointDonations = done
        }
    }
    let memoryEnd = Memory.sample()
    let peakRSS = Memory.statusField("VmHWM")

    // Queries: evaluate (pure), then commit (evaluate + publish), on the same random stacks.
    let queryTime = timestamp(clock + 60_000_000)
    let targets = (0..<options.queries).map { _ in population.stackIDs[rng.below(population.stackIDs.count)] }
    var checksum = 0
    var queryCosts = Costs()
    var start = 0
    while start < targets.count {
        let end = min(start + options.queryBatch, targets.count)
        let began = Instant.now()
        for i in start..<end {
            let decision = try engine.evaluate(stack: targets[i], at: queryTime)
            checksum &+= decision.entries.count &+ (decision.top?.utf8.count ?? 0)
        }
        queryCosts.append(began.elapsed() / (end - start))
        start = end
    }
    var commitCosts = Costs()
    start = 0
    while start < targets.count {
        let end = min(start + options.queryBatch, targets.count)
        let began = Instant.now()
        for i in start..<end {
            if let decision = engine.commit(stack: targets[i], at: queryTime) { checksum &+= decision.revision }
        }
        commitCosts.append(began.elapsed() / (end - start))
        start = end
    }

    return RunResult(
        setupMilliseconds: setupMilliseconds,
        donations: donationCosts,
        donationsPerSecond: Double(options.donations) / (donationWall / 1e9),
        looks: looks,
        lookWall: medianOf(lookCosts),
        queries: queryCosts,
        commits: commitCosts,
        memoryBase: memoryBase,
        memoryAfterSetup: memoryAfterSetup,
        memoryCheckpoint: memoryCheckpoint ?? memoryEnd,
        memoryEnd: memoryEnd,
        checkpointDonations: checkpointDonations,
        peakRSS: peakRSS,
        simulatedDays: Double(clock - startMicroseconds) / 86_400e6,
        checksum: checksum)
}

// MARK: Report

struct Summary {
    var median: Double
    var min: Double
    var max: Double

    init(_ values: [Double]) {
        median = medianOf(values)
        min = values.min() ?? .nan
        max = values.max() ?? .nan
    }

    var json: String { "{\"median\": \(jsonNumber(median)), \"min\": \(jsonNumber(min)), \"max\": \(jsonNumber(max))}" }
}

func jsonNumber(_ value: Double, decimals: Int = 4) -> String {
    value.isFinite ? fixed(value, decimals) : "null"
}

func jsonString(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        default:
            if scalar.value < 0x20 {
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
    }
    return out + "\""
}

let donationTarget = 2_000.0
let queryTarget = 10_000.0
let memoryTarget = 1.10

func report(_ results: [RunResult], population: Population, options: Options, load: (before: Double, after: Double)) {
    let donation = Summary(results.map(\.donations.wall))
    let donationCPU = Summary(results.map(\.donations.cpu))
    let query = Summary(results.map(\.queries.wall))
    let queryCPU = Summary(results.map(\.queries.cpu))
    let commit = Summary(results.map(\.commits.wall))
    let commitCPU = Summary(results.map(\.commits.cpu))
    let look = Summary(results.map(\.lookWall))
    let rssRatio = Summary(results.map(\.rssRatio))
    let heapRatio = Summary(results.map(\.heapRatio))
    let rssCheckpoint = Summary(results.map { mebibytes($0.memoryCheckpoint.rss) })
    let rssEnd = Summary(results.map { mebibytes($0.memoryEnd.rss) })
    let heapCheckpoint = Summary(results.map { mebibytes($0.memoryCheckpoint.heapInUse) })
    let heapEnd = Summary(results.map { mebibytes($0.memoryEnd.heapInUse) })
    let growth = Summary(results.map(\.rssGrowthOverEngine))
    let rssBase = Summary(results.map { mebibytes($0.memoryBase.rss) })
    let setup = Summary(results.map(\.setupMilliseconds))
    let throughput = Summary(results.map(\.donationsPerSecond))
    let donationPass = donation.median <= donationTarget
    let queryPass = query.median <= queryTarget
    let memoryPass = rssRatio.median <= memoryTarget
    let allPass = donationPass && queryPass && memoryPass
    let checkpoint = results.first?.checkpointDonations ?? options.memoryCheckpoint
    let placements = population.placementsPerApp
    let appsPlaced = placements.count { $0 > 0 }
    let note = "runs share one process (malloc_trim(0) before each); wall = CLOCK_MONOTONIC, cpu = CLOCK_THREAD_CPUTIME_ID; "
        + "looks are timed on their own and left out of the donation cost"

    if options.json {
        func costs(_ c: Costs) -> String {
            "{\"wall\": \(jsonNumber(c.wall)), \"cpu\": \(jsonNumber(c.cpu)), \"wallBatchMin\": \(jsonNumber(c.wallMin)), \"wallBatchMax\": \(jsonNumber(c.wallMax))}"
        }
        func memory(_ m: MemorySample) -> String { "{\"rss\": \(m.rss), \"heapInUse\": \(m.heapInUse)}" }
        var fields: [String] = []
        fields.append(
            "\"parameters\": {\"runs\": \(options.runs), \"stacks\": \(options.stacks), \"widgets\": \(options.widgets), "
                + "\"donations\": \(options.donations), \"apps\": \(options.apps), \"batch\": \(options.batch), "
                + "\"queries\": \(options.queries), \"queryBatch\": \(options.queryBatch), \"lookEvery\": \(options.lookEvery), "
                + "\"memoryCheckpoint\": \(checkpoint), \"zipf\": \(jsonNumber(options.zipf)), \"seed\": \(options.seed)}")
        fields.append("\"loadAverage\": {\"before\": \(jsonNumber(load.before, decimals: 2)), \"after\": \(jsonNumber(load.after, decimals: 2))}")
        fields.append("\"donationNanoseconds\": \(donation.json)")
        fields.append("\"donationCPUNanoseconds\": \(donationCPU.json)")
        fields.append("\"queryNanoseconds\": \(query.json)")
        fields.append("\"queryCPUNanoseconds\": \(queryCPU.json)")
        fields.append("\"commitNanoseconds\": \(commit.json)")
        fields.append("\"commitCPUNanoseconds\": \(commitCPU.json)")
        fields.append("\"lookNanoseconds\": \(look.json)")
        fields.append("\"donationsPerSecond\": \(throughput.json)")
        fields.append("\"setupMilliseconds\": \(setup.json)")
        fields.append("\"rssMiBBase\": \(rssBase.json)")
        fields.append("\"rssMiBAtCheckpoint\": \(rssCheckpoint.json)")
        fields.append("\"rssMiBAtEnd\": \(rssEnd.json)")
        fields.append("\"rssRatio\": \(rssRatio.json)")
        fields.append("\"heapMiBAtCheckpoint\": \(heapCheckpoint.json)")
        fields.append("\"heapMiBAtEnd\": \(heapEnd.json)")
        fields.append("\"heapRatio\": \(heapRatio.json)")
        fields.append("\"rssGrowthOverEngineFootprint\": \(growth.json)")
        let runs = results.enumerated().map { index, r in
            "{\"run\": \(index + 1), \"donationNanoseconds\": \(costs(r.donations)), \"looks\": \(r.looks), "
                + "\"lookNanoseconds\": \(jsonNumber(r.lookWall)), \"queryNanoseconds\": \(costs(r.queries)), "
                + "\"commitNanoseconds\": \(costs(r.commits)), \"memoryBase\": \(memory(r.memoryBase)), "
                + "\"memoryAfterSetup\": \(memory(r.memoryAfterSetup)), \"memoryAtCheckpoint\": \(memory(r.memoryCheckpoint)), "
                + "\"memoryAtEnd\": \(memory(r.memoryEnd)), \"peakRSS\": \(r.peakRSS), "
                + "\"simulatedDays\": \(jsonNumber(r.simulatedDays, decimals: 1)), \"checksum\": \(r.checksum)}"
        }
        fields.append("\"runs\": [\(runs.joined(separator: ", "))]")
        fields.append(
            "\"targets\": {\"donationNanoseconds\": \(jsonNumber(donationTarget)), \"queryNanoseconds\": \(jsonNumber(queryTarget)), "
                + "\"rssRatio\": \(jsonNumber(memoryTarget))}")
        fields.append(
            "\"pass\": {\"donation\": \(donationPass), \"query\": \(queryPass), \"memory\": \(memoryPass), \"all\": \(allPass)}")
        fields.append("\"note\": \(jsonString(note))")
        print("{" + fields.joined(separator: ", ") + "}")
        return
    }

    let days = results.first?.simulatedDays ?? 0
    let k = checkpoint % 1_000 == 0 ? "\(checkpoint / 1_000)k" : String(checkpoint)
    print(
        "smartstack-bench: \(options.stacks) stacks × \(options.widgets) widgets, \(options.apps) apps "
            + "(Zipf s=\(fixed(options.zipf, 2)), seed \(options.seed)), \(options.donations) donations over "
            + "\(fixed(days, 0)) days, \(options.runs) run(s)")
    print(
        "  stacks per app: most popular \(placements.first ?? 0), least popular \(placements.last ?? 0); "
            + "apps placed in some stack: \(appsPlaced)/\(options.apps)")
    print(
        "  looks: 1 in \(options.lookEvery) donations on average (\(results.first?.looks ?? 0) per run), timed on their own; "
            + "donations timed in batches of \(options.batch); \(options.queries) queries in batches of \(options.queryBatch)")
    print("  load average (1 min): \(fixed(load.before, 2)) before, \(fixed(load.after, 2)) after; \(note)")
    print("")
    print("per run (ns per operation, median over batches; wall [batch min–max] / cpu)")
    print(
        "run  donation wall [min–max]  cpu     look  query wall [min–max]      cpu   commit    RSS MiB @\(k) → end   ratio"
            + "   heap MiB @\(k) → end   ratio")
    for (index, r) in results.enumerated() {
        let donationText = "\(fixed(r.donations.wall, 1)) [\(fixed(r.donations.wallMin, 0))–\(fixed(r.donations.wallMax, 0))]"
        let queryText = "\(fixed(r.queries.wall, 1)) [\(fixed(r.queries.wallMin, 0))–\(fixed(r.queries.wallMax, 0))]"
        let rss = "\(fixed(mebibytes(r.memoryCheckpoint.rss), 1)) → \(fixed(mebibytes(r.memoryEnd.rss), 1))"
        let heap = "\(fixed(mebibytes(r.memoryCheckpoint.heapInUse), 1)) → \(fixed(mebibytes(r.memoryEnd.heapInUse), 1))"
        print(
            padded(String(index + 1), 5) + padded(donationText, 22) + fixed(r.donations.cpu, 1, width: 8)
                + fixed(r.lookWall, 0, width: 8) + "  " + padded(queryText, 24) + fixed(r.queries.cpu, 0, width: 7)
                + fixed(r.commits.wall, 0, width: 9) + "    " + padded(rss, 18) + fixed(r.rssRatio, 3, width: 7)
                + "    " + padded(heap, 18) + fixed(r.heapRatio, 3, width: 7))
    }
    print("")
    func line(_ name: String, _ s: Summary, _ decimals: Int, _ unit: String, target: String = "", pass: Bool? = nil) {
        let verdict = pass.map { $0 ? "PASS" : "FAIL" } ?? ""
        let range = "[" + fixed(s.min, decimals) + " – " + fixed(s.max, decimals) + "]"
        print(
            padded(name, 44) + fixed(s.median, decimals, width: 11) + "  " + padded(range, 24) + padded(unit, 5)
                + padded(target, 11) + verdict)
    }
    print(padded("summary over runs", 44) + "     median  [min – max]")
    line("donation cost (wall)", donation, 1, "ns", target: "≤ 2000", pass: donationPass)
    line("donation cost (cpu)", donationCPU, 1, "ns")
    line("query cost: evaluate, \(options.widgets) widgets (wall)", query, 1, "ns", target: "≤ 10000", pass: queryPass)
    line("query cost: evaluate (cpu)", queryCPU, 1, "ns")
    line("RSS after \(options.donations) / after \(checkpoint)", rssRatio, 3, "×", target: "≤ 1.100", pass: memoryPass)
    line("RSS before the engine (process baseline)", rssBase, 1, "MiB")
    line("RSS after \(checkpoint) donations", rssCheckpoint, 1, "MiB")
    line("RSS after \(options.donations) donations", rssEnd, 1, "MiB")
    line("RSS growth / engine's RSS at \(checkpoint)", growth, 3, "×")
    line("heap in use after \(options.donations) / after \(checkpoint)", heapRatio, 3, "×")
    line("heap in use after \(checkpoint) donations", heapCheckpoint, 1, "MiB")
    line("heap in use after \(options.donations) donations", heapEnd, 1, "MiB")
    line("look cost (wall, info)", look, 1, "ns")
    line("commit cost: evaluate + publish (wall, info)", commit, 1, "ns")
    line("commit cost (cpu, info)", commitCPU, 1, "ns")
    line("donation throughput (wall, info)", throughput, 0, "/s")
    line("setup: register kinds + stacks (info)", setup, 2, "ms")
    print("")
    print(
        "overall: \(allPass ? "PASS" : "FAIL") (donation \(donationPass ? "pass" : "FAIL"), "
            + "query \(queryPass ? "pass" : "FAIL"), memory \(memoryPass ? "pass" : "FAIL"))")
}

// MARK: Main

do {
    let options = try Options.parse(Array(CommandLine.arguments.dropFirst()))
    let population = try Population(options: options)
    let loadBefore = loadAverage()
    var results: [RunResult] = []
    for number in 1...options.runs {
        let result = try run(population: population, options: options)
        writeError(
            "run \(number)/\(options.runs): donation \(fixed(result.donations.wall)) ns, query \(fixed(result.queries.wall)) ns, "
                + "RSS ratio \(fixed(result.rssRatio, 3))")
        results.append(result)
    }
    report(results, population: population, options: options, load: (loadBefore, loadAverage()))
} catch {
    writeError("smartstack-bench: \(error)")
    exit(1)
}
