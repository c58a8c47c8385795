// smartstack-store-bench — measures the durable store: appends per second with group commit (no socket), and
// start-up to serving with a large stored history. The socket numbers come from smartstack-load against a
// running smartstackd; `make bench-store` runs all of them (see README "Storage benchmark").
//
//   smartstack-store-bench store   [--seconds S] [--clients N] [--durability process|power]
//   smartstack-store-bench fill    --state DIR [--donations N]
//   smartstack-store-bench startup --daemon PATH --state DIR [--runs N]

#if canImport(Glibc)
    import Glibc
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
guard let command = arguments.first else { usage() }
let options = BenchOptions.parse(Array(arguments.dropFirst()))
switch command {
case "store": await StoreBenchmark.run(options)
case "batch": await BatchBenchmark.run(options)
case "raw": RawBenchmark.run(options)
case "load": LoadBenchmark.run(options)
case "restore": await RestoreBenchmark.run(options)
case "fill": await FillState.run(options)
case "startup": StartupBenchmark.run(options)
default: usage()
}

func usage() -> Never {
    let text = """
        usage: smartstack-store-bench store [--seconds S] [--clients N] [--durability process|power]
               smartstack-store-bench fill --state DIR [--donations N]
               smartstack-store-bench startup --daemon PATH --state DIR [--runs N]

        """
    var message = text
    message.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    exit(2)
}
