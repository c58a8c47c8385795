// swift-tools-version:6.0
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "smartstackd",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "SmartStackCore", targets: ["SmartStackCore"]),
        .executable(name: "smartstack-eval", targets: ["smartstack-eval"]),
        .executable(name: "smartstack-bench", targets: ["smartstack-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
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
        .executableTarget(name: "smartstack-bench", dependencies: ["SmartStackCore"], swiftSettings: strict),
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
        .testTarget(name: "SmartStackCoreTests", dependencies: ["SmartStackCore"], swiftSettings: strict),
        .testTarget(name: "SmartStackEvalTests", dependencies: ["SmartStackEval"], swiftSettings: strict),
        .testTarget(name: "SmartStackSystemdTests", dependencies: ["SmartStackSystemd"], swiftSettings: strict),
    ],
    swiftLanguageModes: [.v6]
)
