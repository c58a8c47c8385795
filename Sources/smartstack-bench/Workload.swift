// smartstack-bench's workload: the seeded population of apps and stacks, and one timed run over it.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import BenchSupport
import SmartStackCore

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
        lookWall: median(lookCosts),
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
