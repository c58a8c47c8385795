// smartstack-bench: measures the ranking engine against the performance requirement.
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
//
// The code: Options.swift (arguments), Workload.swift (the population and one run), Measurement.swift (clocks
// and memory), Report.swift (verdicts, text and JSON); BenchSupport has what the benchmarks share.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import BenchSupport
import SmartStackCore

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
