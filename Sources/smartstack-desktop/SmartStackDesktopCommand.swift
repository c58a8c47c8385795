// smartstack-desktop — learns from the applications a desktop launches and the moments it is unlocked.
//
// Watches the user's (or, with --system, the system's) service manager over D-Bus (sd-bus) for application
// units (app-*.service, app-*.scope), and logind for unlocks; calls smartstackd over Varlink:
//   io.smartstack.Provider.RegisterWidget, Donate   a launcher widget kind per app; an 'open' per launch
//   io.smartstack.Shell.ConfigureStack, RecordLook  the stack of the most-launched apps; a look per unlock
//
// run(): arguments → journal → configuration → state → the D-Bus watcher thread and the agent, until SIGTERM.
// --replay FILE feeds a usage log through the same tracker and calls instead, and scores the orders.

import ArgumentParser
import Dispatch
import Foundation
import SmartStackDesktop
import SmartStackDesktopService
import SmartStackEval
import SmartStackSystemd
import SmartStackProtocol

@main
struct SmartStackDesktopCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "smartstack-desktop",
        abstract: "Donates the applications a desktop launches to smartstackd and keeps a stack of the most-launched.",
        version: ServiceVersion.current)

    @Option(name: .long, help: "A configuration file of 'key = value' lines.")
    var config: String?

    @Option(name: .long, help: "smartstackd's socket (default: the user's or, with --system, the system's).")
    var socket: String?

    @Option(
        name: .long,
        help:
            "The state directory (default: $STATE_DIRECTORY, else /var/lib/smartstack-desktop as root, else $XDG_STATE_HOME/smartstack-desktop or ~/.local/state/smartstack-desktop)."
    )
    var state: String?

    @Flag(name: .long, help: "Watch the system's service manager on the system bus (configuration key bus).")
    var system = false

    @Flag(name: .long, help: "Watch the user's service manager on the user bus (the default).")
    var user = false

    @Option(name: .long, help: "Feed a usage log through the live path into smartstackd and print the scores.")
    var replay: String?

    @Flag(name: .long, help: "With --replay: each user's stack is the K most launched so far, not the protocol's.")
    var adaptive = false

    func validate() throws {
        if system && user { throw ValidationError("--system and --user exclude each other") }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        var configuration = DesktopConfiguration()
        if let config {
            do {
                configuration = try DesktopConfiguration.parse(
                    String(contentsOfFile: config, encoding: .utf8), source: config)
            } catch let error as DesktopConfigurationError {
                FileHandle.standardError.write(Data("smartstack-desktop: \(error)\n".utf8))
                throw ExitCode(78)  // EX_CONFIG
            }
        }
        if system { configuration.bus = .system }
        if user { configuration.bus = .user }
        if configuration.session.isEmpty { configuration.session = environment["XDG_SESSION_ID"] ?? "" }
        let socket = self.socket ?? Self.defaultSocket(configuration.bus, environment)

        if let replay {
            try await runReplay(replay, socket: socket, configuration: configuration)
            return
        }

        let journal = JournalWriter.automatic(identifier: "smartstack-desktop")
        let stateDirectory =
            state ?? environment["STATE_DIRECTORY"]?.split(separator: ":").first.map(String.init)
            ?? Self.defaultState(environment)
        try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)

        let (inputs, continuation) = AsyncStream<DesktopInput>.makeStream()
        let watcher = BusWatcher(
            bus: configuration.bus, session: configuration.session, overview: configuration.overviewLooks,
            output: continuation)
        let thread = Thread { watcher.run() }
        thread.name = "sd-bus"
        thread.start()

        let notifier = SystemdNotifier.fromEnvironment()
        let stop = DispatchSource.makeSignalSource(signal: SIGTERM, queue: .main)
        signal(SIGTERM, SIG_IGN)
        stop.setEventHandler {
            try? notifier.stopping(status: "stopping")
            try? journal.send(JournalEntry(.stopping, "smartstack-desktop is stopping", fields: [.reason: "SIGTERM"]))
            Foundation.exit(0)
        }
        stop.resume()
        let agent = DesktopAgent(
            configuration: configuration, socket: socket, stateFile: StateFile(directory: stateDirectory),
            journal: journal, notifier: notifier)
        try await agent.run(inputs: inputs)
    }

    func runReplay(_ path: String, socket: String, configuration: DesktopConfiguration) async throws {
        let log = try UsageLog.parse(String(contentsOfFile: path, encoding: .utf8), file: path)
        var options = DesktopReplay.Options()
        options.stackSize = configuration.stackSize
        options.family = configuration.family
        options.protocolStacks = !adaptive
        let score = try await DesktopReplay.run(log, socket: socket, options: options)
        let refused = score.refused.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
        print(
            String(
                format:
                    "live path (%@ stacks): moments %d counted %d coverage %.4f hit@1 %.6f hit@3 %.6f MRR %.6f calls %d refused %@",
                adaptive ? "adaptive" : "protocol", score.moments, score.counted, score.coverage, score.hit1,
                score.hit3,
                score.mrr, score.calls, refused.isEmpty ? "none" : refused))
    }

    /// The socket of the smartstackd this agent's user runs: the user unit's `$XDG_RUNTIME_DIR/smartstack/io.smartstack`
    /// (root's user session too), else the daemon's and smartstackctl's own default (`ServiceDefaults`:
    /// `/tmp/smartstack-UID/io.smartstack` for a user without a runtime directory, where the system socket was
    /// taken and never reached); the system service's with `--system`.
    static func defaultSocket(_ bus: DesktopConfiguration.Bus, _ environment: [String: String]) -> String {
        guard bus == .user else { return ServiceDefaults.systemSocketPath }
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return runtime + "/smartstack/io.smartstack"
        }
        return ServiceDefaults(environment: environment, uid: getuid()).socketPath
    }

    static func defaultState(_ environment: [String: String]) -> String {
        if getuid() == 0 { return "/var/lib/smartstack-desktop" }
        let base = environment["XDG_STATE_HOME"] ?? ((environment["HOME"] ?? "/tmp") + "/.local/state")
        return base + "/smartstack-desktop"
    }
}
