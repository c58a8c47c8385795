#if canImport(Glibc)
    import Glibc
#endif

/// The benchmark's options, parsed from `--name value` pairs.
struct BenchOptions {
    var seconds = 5.0
    var clients = 50
    var durability = "process"
    var state = ""
    var donations = 1_000_000
    var daemon = ""
    var runs = 5
    var stacks = 1

    static func parse(_ arguments: [String]) -> BenchOptions {
        var options = BenchOptions()
        var index = 0
        func value() -> String {
            index += 1
            guard index < arguments.count else { usage() }
            return arguments[index]
        }
        while index < arguments.count {
            switch arguments[index] {
            case "--seconds": options.seconds = Double(value()) ?? options.seconds
            case "--clients": options.clients = Int(value()) ?? options.clients
            case "--durability": options.durability = value()
            case "--state": options.state = value()
            case "--donations": options.donations = Int(value()) ?? options.donations
            case "--daemon": options.daemon = value()
            case "--runs": options.runs = Int(value()) ?? options.runs
            case "--stacks": options.stacks = Int(value()) ?? options.stacks
            default: usage()
            }
            index += 1
        }
        return options
    }
}

func monotonicSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

func temporaryDirectory() -> String {
    var template = Array("/tmp/smartstack-bench-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { fatalError("mkdtemp failed") }
    return String(cString: made)
}
