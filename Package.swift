// swift-tools-version:6.0
import PackageDescription

// `make fuzz-build` (docs/fuzzing.md) sets SMARTSTACK_FUZZ=1 and builds into its own scratch path, .build-fuzz: the
// project's own modules are then compiled with coverage instrumentation and AddressSanitizer (-sanitize=fuzzer,address)
// and the fuzz-* targets become libFuzzer targets, while the dependencies (NIO, GRDB, ...) are compiled as usual
// (`-Xswiftc` would instrument them as well, which made the dispatch target's fresh build three times longer).
let fuzzing = Context.environment["SMARTSTACK_FUZZ"] == "1"
let sanitized: [SwiftSetting] = fuzzing ? [.unsafeFlags(["-sanitize=fuzzer,address"])] : []

let base: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]
let strict: [SwiftSetting] = base + sanitized

/// A libFuzzer target: its source defines `LLVMFuzzerTestOneInput` under SMARTSTACK_FUZZ (a stub otherwise), and it
/// links libFuzzer and ASan with `LLVMFuzzerRunDriver` exported (FuzzSupport looks it up).
let fuzzTarget: [SwiftSetting] = strict + (fuzzing ? [.define("SMARTSTACK_FUZZ")] : [])
let fuzzLinker: [LinkerSetting] =
    fuzzing
    ? [
        .unsafeFlags([
            "-sanitize=fuzzer,address", "-Xlinker", "--export-dynamic-symbol=LLVMFuzzerRunDriver", "-Xlinker",
            "--export-dynamic-symbol=dispatch_async",
        ])
    ] : []

let package = Package(
    name: "smartstackd",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "SmartStackCore", targets: ["SmartStackCore"]),
        .library(name: "SmartStackProtocol", targets: ["SmartStackProtocol"]),
        .executable(name: "smartstack-eval", targets: ["smartstack-eval"]),
        .executable(name: "smartstack-bench", targets: ["smartstack-bench"]),
        .executable(name: "smartstack-wire-bench", targets: ["smartstack-wire-bench"]),
        .executable(name: "smartstackd", targets: ["smartstackd"]),
        .executable(name: "smartstackctl", targets: ["smartstackctl"]),
        .executable(name: "smartstack-desktop", targets: ["smartstack-desktop"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
    ],
    targets: [
        // The domain model and the ranking engine: value types, no I/O.
        .target(name: "SmartStackCore", swiftSettings: strict),
        // The home-moment evaluation protocol of docs/usage-log.md, its baselines and reports.
        .target(name: "SmartStackEval", dependencies: ["SmartStackCore"], swiftSettings: strict),
        .executableTarget(
            name: "smartstack-eval",
            dependencies: [
                "SmartStackEval",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),
        // Everything about the wire: JSON, Varlink framing and envelopes, the interface files, requests and
        // replies mapped to and from Core values. No I/O.
        .target(
            name: "SmartStackProtocol",
            dependencies: ["SmartStackCore"],
            resources: [
                .embedInCode("Interfaces/org.varlink.service.varlink"),
                .embedInCode("Interfaces/io.smartstack.Provider.varlink"),
                .embedInCode("Interfaces/io.smartstack.Shell.varlink"),
                .embedInCode("Interfaces/io.smartstack.Admin.varlink"),
            ],
            swiftSettings: strict
        ),
        // What the benchmarks share: the median and percentile, number formatting, JSON text.
        .target(name: "BenchSupport", swiftSettings: strict),
        .executableTarget(
            name: "smartstack-bench", dependencies: ["SmartStackCore", "BenchSupport"], swiftSettings: strict),
        // What decoding a call costs, and the event loop's whole work per call (`--calls`), on one thread without sockets.
        .executableTarget(
            name: "smartstack-wire-bench",
            dependencies: [
                "SmartStackProtocol", "SmartStackServer", "SmartStackStore", "SmartStackCore", "BenchSupport",
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        // Durable state: the event log boundary and its SQLite implementation (WAL, one writer, group commit,
        // engine snapshots), through GRDB.
        .target(
            name: "SmartStackStore",
            dependencies: [
                "SmartStackCore",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The storage benchmark: the store alone, filling a state directory, start-up to serving.
        .executableTarget(
            name: "smartstack-store-bench",
            dependencies: [
                "SmartStackStore", "SmartStackServer", "SmartStackCore", "BenchSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strict
        ),
        // The fastest a swift-nio server answers the load generator's calls doing no work per call (BENCHMARKS.md).
        .executableTarget(
            name: "smartstack-nio-floor",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: strict),
        // A socket-level load generator: many concurrent clients against a running smartstackd.
        .executableTarget(name: "smartstack-load", dependencies: ["CEpoll", "BenchSupport"], swiftSettings: strict),
        .systemLibrary(name: "CEpoll"),
        .systemLibrary(name: "CLinux"),
        // The service: connections, dispatch, the engine's owner, subscriptions, access policy, lifecycle, and its
        // systemd side (notify, watchdog, socket activation, journal entries).
        .target(
            name: "SmartStackServer",
            dependencies: [
                "SmartStackCore", "SmartStackProtocol", "SmartStackStore", "SmartStackSystemd", "CLinux",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Collections", package: "swift-collections"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // The async client the command line and the tests use.
        .target(
            name: "SmartStackClient",
            dependencies: [
                "SmartStackProtocol",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "smartstackd",
            dependencies: [
                "SmartStackServer", "SmartStackProtocol", "SmartStackStore", "SmartStackSystemd",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // smartstack-desktop's core: application unit names, launch counting and dedup, the stack of the
        // most-launched apps, and events → smartstackd calls. No I/O.
        .target(
            name: "SmartStackDesktop", dependencies: ["SmartStackCore", "SmartStackProtocol"], swiftSettings: strict),
        // smartstack-desktop's I/O: the sd-bus watcher (service manager, logind), the agent that sends the core's
        // calls to smartstackd and keeps them until acknowledged, the state file, and the usage-log replay.
        .target(
            name: "SmartStackDesktopService",
            dependencies: [
                "SmartStackDesktop", "SmartStackClient", "SmartStackSystemd", "SmartStackEval", "SmartStackCore",
                "SmartStackProtocol",
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "smartstack-desktop",
            dependencies: [
                "SmartStackDesktopService", "SmartStackDesktop", "SmartStackSystemd", "SmartStackEval",
                "SmartStackProtocol",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SmartStackDesktopTests",
            dependencies: ["SmartStackDesktop", "SmartStackCore", "SmartStackProtocol"],
            swiftSettings: strict),
        // Reads smartstackd's decision entries from the journal and aggregates them: summaries, JSON, HTML/SVG.
        .target(
            name: "SmartStackAnalysis",
            dependencies: ["SmartStackCore", "SmartStackProtocol", "SmartStackSystemd"],
            swiftSettings: strict
        ),
        // What smartstackctl does besides parsing arguments: tables and colour, rendering replies, errors and
        // exit codes, usage-log replay over the socket. Testable without the executable.
        .target(
            name: "SmartStackCtlKit",
            dependencies: [
                "SmartStackClient", "SmartStackProtocol", "SmartStackAnalysis", "SmartStackEval", "SmartStackCore",
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "smartstackctl",
            dependencies: [
                "SmartStackClient", "SmartStackCtlKit", "SmartStackAnalysis", "SmartStackProtocol", "SmartStackEval",
                "SmartStackSystemd", "SmartStackCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),
        // libFuzzer targets (docs/fuzzing.md): built as fuzzers only by `make fuzz-build` (SMARTSTACK_FUZZ=1, see
        // `fuzzing` above); the normal build makes a stub (fuzz-codec: the seed generator).
        // Hands a fuzz target's entry point over to libFuzzer's driver.
        // Not instrumented: its queue's waits depend on timing, not on the input (OneThreadExecutor).
        .target(name: "FuzzSupport", dependencies: ["CFuzzSupport"], swiftSettings: base),
        // Its dispatch_async, exported by the fuzz executables, sends global-queue work to the fuzzing thread
        // (OneThreadExecutor); without a hook set it is libdispatch's.
        .target(name: "CFuzzSupport"),
        .executableTarget(
            name: "fuzz-wire", dependencies: ["SmartStackProtocol", "FuzzSupport"], swiftSettings: fuzzTarget,
            linkerSettings: fuzzLinker),
        .executableTarget(
            name: "fuzz-dispatch",
            dependencies: [
                "SmartStackServer", "SmartStackProtocol", "SmartStackStore", "SmartStackCore", "FuzzSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: fuzzTarget,
            linkerSettings: fuzzLinker
        ),
        .executableTarget(
            name: "fuzz-codec", dependencies: ["SmartStackCore", "FuzzSupport"], swiftSettings: fuzzTarget,
            linkerSettings: fuzzLinker),
        .testTarget(
            name: "SmartStackServerTests",
            dependencies: [
                "SmartStackServer", "SmartStackClient", "SmartStackProtocol", "SmartStackStore", "SmartStackCore",
                "SmartStackSystemd", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "SmartStackStoreTests",
            dependencies: [
                "SmartStackStore", "SmartStackServer", "SmartStackCore",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strict),
        .testTarget(name: "SmartStackCoreTests", dependencies: ["SmartStackCore"], swiftSettings: strict),
        .testTarget(
            name: "SmartStackEvalTests", dependencies: ["SmartStackEval", "SmartStackCore"], swiftSettings: strict),
        .testTarget(
            name: "SmartStackProtocolTests", dependencies: ["SmartStackProtocol", "SmartStackCore"],
            swiftSettings: strict),
        // libsystemd through pkg-config; the module map and shim.h are all the C there is.
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        // Thin Swift wrappers over libsystemd: notify and watchdog, listen fds, the journal, message IDs.
        .target(
            name: "SmartStackSystemd",
            dependencies: ["CSystemd", .product(name: "SystemPackage", package: "swift-system")],
            swiftSettings: strict
        ),
        // Test-only helper: runs SmartStackSystemd under real systemd tools (socket activation, journald, PID 1).
        .executableTarget(name: "smartstack-systemd-probe", dependencies: ["SmartStackSystemd"], swiftSettings: strict),
        .testTarget(name: "SmartStackSystemdTests", dependencies: ["SmartStackSystemd"], swiftSettings: strict),
        // Test-only: org.varlink.certification on the service's own Varlink stack (the listener, connections,
        // framing, JSON and IDL smartstackd uses) as a server, and the certification sequence through
        // SmartStackClient as a client, for the reference implementation's suite (Tests/e2e/test_certification.py).
        .executableTarget(
            name: "varlink-certification",
            dependencies: [
                "SmartStackServer", "SmartStackClient", "SmartStackProtocol",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            resources: [.embedInCode("org.varlink.certification.varlink")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SmartStackCtlTests",
            dependencies: [
                "SmartStackCtlKit", "SmartStackAnalysis", "SmartStackSystemd", "SmartStackProtocol", "SmartStackClient",
                "SmartStackCore", "SmartStackEval",
            ],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
