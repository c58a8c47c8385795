// smartstack-bench's options.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import BenchSupport
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
            throw BenchError(
                "--widgets (\(options.widgets)) must not exceed --apps (\(options.apps)): a stack's apps are distinct")
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
