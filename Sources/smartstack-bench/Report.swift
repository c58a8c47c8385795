// smartstack-bench's report: the verdicts against the targets, as text and JSON.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import BenchSupport
import SmartStackCore

// MARK: Statistics and formatting

func padded(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}

func mebibytes(_ bytes: Int) -> Double { Double(bytes) / 1_048_576 }

func writeError(_ text: String) {
    let line = text + "\n"
    _ = line.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
}

// MARK: Report

struct Summary {
    var median: Double
    var min: Double
    var max: Double

    init(_ values: [Double]) {
        median = BenchSupport.median(values)
        min = values.min() ?? .nan
        max = values.max() ?? .nan
    }

    var json: String { "{\"median\": \(jsonNumber(median)), \"min\": \(jsonNumber(min)), \"max\": \(jsonNumber(max))}" }
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
    let note =
        "runs share one process (malloc_trim(0) before each); wall = CLOCK_MONOTONIC, cpu = CLOCK_THREAD_CPUTIME_ID; "
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
                + "\"memoryCheckpoint\": \(checkpoint), \"zipf\": \(jsonNumber(options.zipf)), \"seed\": \(options.seed)}"
        )
        fields.append(
            "\"loadAverage\": {\"before\": \(jsonNumber(load.before, decimals: 2)), \"after\": \(jsonNumber(load.after, decimals: 2))}"
        )
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
            "\"pass\": {\"donation\": \(donationPass), \"query\": \(queryPass), \"memory\": \(memoryPass), \"all\": \(allPass)}"
        )
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
            + "donations timed in batches of \(options.batch); \(options.queries) queries in batches of \(options.queryBatch)"
    )
    print("  load average (1 min): \(fixed(load.before, 2)) before, \(fixed(load.after, 2)) after; \(note)")
    print("")
    print("per run (ns per operation, median over batches; wall [batch min–max] / cpu)")
    print(
        "run  donation wall [min–max]  cpu     look  query wall [min–max]      cpu   commit    RSS MiB @\(k) → end   ratio"
            + "   heap MiB @\(k) → end   ratio")
    for (index, r) in results.enumerated() {
        let donationText =
            "\(fixed(r.donations.wall, 1)) [\(fixed(r.donations.wallMin, 0))–\(fixed(r.donations.wallMax, 0))]"
        let queryText = "\(fixed(r.queries.wall, 1)) [\(fixed(r.queries.wallMin, 0))–\(fixed(r.queries.wallMax, 0))]"
        let rss = "\(fixed(mebibytes(r.memoryCheckpoint.rss), 1)) → \(fixed(mebibytes(r.memoryEnd.rss), 1))"
        let heap =
            "\(fixed(mebibytes(r.memoryCheckpoint.heapInUse), 1)) → \(fixed(mebibytes(r.memoryEnd.heapInUse), 1))"
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
