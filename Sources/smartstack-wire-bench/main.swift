// smartstack-wire-bench: what decoding a call costs, without sockets, threads or the engine.
//
// Usage: smartstack-wire-bench [--runs N (7)] [--iterations N (200000)] [--frame NAME (all)] [--json]
//
// Over a socket the machine's noise (other VMs, the client sharing a core) spreads one binary's rates by ±25 %
// between runs (BENCHMARKS.md), too much to tell a change of a few percent in the event loop's own code. Decoding
// is a pure function of the frame's bytes, so it is measured here on one thread with its CPU clock
// (CLOCK_THREAD_CPUTIME_ID: time the thread was descheduled is left out): each frame the load client sends
// (`smartstack-load`'s Donate, GetStack and SubmitTimeline) decoded into its envelope (`VarlinkCall(bytes:)`) and its
// typed request (`SmartStackRequest(call:)`), `iterations` times per run; each run's figure is its CPU time /
// iterations, and the median and the minimum over `runs` runs are printed (a descheduled vCPU still counts on this
// clock, so the minimum is the steadier figure on a shared machine). The reply to a donation is encoded the same way.

#if canImport(Glibc)
    import Glibc
#endif
import BenchSupport
import SmartStackProtocol

struct Frame {
    var name: String
    var bytes: [UInt8]
}

/// A frame as `append` writes it, without its NUL (as the connection hands a message to the decoder).
func frame(_ name: String, _ append: (inout [UInt8]) -> Void) -> Frame {
    var bytes: [UInt8] = []
    append(&bytes)
    return Frame(name: name, bytes: Array(bytes.dropLast()))
}

/// `smartstack-load`'s frames.
let frames = [
    frame("Donate") { LoadFrames.donate(runID: "1764284400", client: 3, sequence: 12_345, to: &$0) },
    frame("GetStack") { LoadFrames.getStack(to: &$0) },
    frame("SubmitTimeline") { LoadFrames.submitTimeline(client: 3, sequence: 12_345, to: &$0) },
]

func threadCPUNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// CPU nanoseconds per iteration of `body`, one run.
func measure(iterations: Int, _ body: () throws -> Int) rethrows -> Double {
    var sink = 0
    let start = threadCPUNanoseconds()
    for _ in 0..<iterations { sink &+= try body() }
    let elapsed = threadCPUNanoseconds() - start
    if sink == 42 { print("") }  // keeps the work observable
    return Double(elapsed) / Double(iterations)
}

func decode(_ frame: Frame) throws -> Int {
    try frame.bytes.withUnsafeBufferPointer { buffer in
        let call = try VarlinkCall(bytes: buffer)
        let request = try SmartStackRequest(call: call)
        return withExtendedLifetime(request) { call.method.utf8.count }
    }
}

func encodeDonationReply(into scratch: inout [UInt8]) -> Int {
    scratch.removeAll(keepingCapacity: true)
    VarlinkReply(parameters: DonateRequest.reply(id: "1764284400-3-12345")).encode(into: &scratch)
    return scratch.count
}

var runs = 7
var iterations = 200_000
var json = false
var only: String?
/// `--calls N`: the loop's work per call (`CallPath.swift`), N calls per run, instead of decoding alone.
var callPath: Int?
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--runs": runs = max(1, Int(arguments.next() ?? "") ?? runs)
    case "--iterations": iterations = max(1, Int(arguments.next() ?? "") ?? iterations)
    case "--frame": only = arguments.next()
    case "--json": json = true
    case "--calls": callPath = max(1_000, Int(arguments.next() ?? "") ?? 100_000)
    default:
        print(
            "usage: smartstack-wire-bench [--runs N (7)] [--iterations N (200000)] [--frame NAME (all)] [--calls N] [--json]"
        )
        exit(2)
    }
}

do {
    // Each measure: the runs' figures (the minimum is the steadiest on a busy machine, the median the usual one).
    var results: [(name: String, runs: [Double])] = []
    if let callPath {
        results = try await CallPathBench.run(runs: runs, calls: callPath, only: only)
    } else {
        for frame in frames where only == nil || only == frame.name {
            _ = try measure(iterations: iterations / 10) { try decode(frame) }  // warm-up
            let perRun = try (0..<runs).map { _ in try measure(iterations: iterations) { try decode(frame) } }
            results.append(("decode \(frame.name)", perRun))
        }
        var scratch: [UInt8] = []
        let encoded = (0..<runs).map { _ in measure(iterations: iterations) { encodeDonationReply(into: &scratch) } }
        results.append(("encode Donate reply", encoded))
    }
    if json {
        print(jsonObject(["runs": "\(runs)", callPath == nil ? "iterations" : "calls": "\(callPath ?? iterations)"]))
        for (name, figures) in results {
            print(
                jsonObject([
                    "measure": jsonString(name), "nanoseconds": jsonNumber(median(figures), decimals: 1),
                    "minimum": jsonNumber(figures.min() ?? 0, decimals: 1),
                ]))
        }
    } else {
        let count = callPath.map { "\($0) calls" } ?? "\(iterations)"
        print(
            "CPU time per \(callPath == nil ? "frame" : "call") over \(runs) runs of \(count) (thread CPU clock), median and minimum:"
        )
        for (name, figures) in results {
            print("  \(name): \(fixed(median(figures))) ns, min \(fixed(figures.min() ?? 0)) ns")
        }
    }
} catch {
    print("smartstack-wire-bench: \(error)")
    exit(1)
}
