// smartstackd — ranks the widgets of every Smart Stack and serves the answer over Varlink.
//
// Interfaces served on one Unix socket (bound with --listen, or passed by systemd as "varlink"):
//   io.smartstack.Provider  apps: register widget kinds, donate intents, push timelines, watch reloads
//   io.smartstack.Shell     shells: configure stacks, get and subscribe to orders, report engagement
//   io.smartstack.Admin     statistics and the log level
//   org.varlink.service     introspection
//
// run(): arguments → logging (journal or stderr) → configuration → services → run until SIGTERM/SIGINT.
// Under systemd: READY=1/STATUS=/STOPPING=1, watchdog pings through the engine, socket activation.

import ArgumentParser
import Logging
import NIOPosix
import ServiceLifecycle
import SmartStackProtocol
import SmartStackServer
import SmartStackStore
import SmartStackSystemd

#if canImport(Glibc)
    import Glibc
#endif

@main
struct SmartStackDaemon: AsyncParsableCommand {
    /// How long a stop waits for journald to take the last entries.
    static let journalCloseLimit = Duration.seconds(3)

    static let configuration = CommandConfiguration(
        commandName: "smartstackd",
        abstract: "Ranks the widgets of every Smart Stack and serves them over Varlink on a Unix socket.",
        version: ServiceVersion.current)

    @Option(name: .long, help: "The Unix socket to listen on (default: the user's or the system's path).")
    var listen: String?

    @Option(name: .long, help: "The state directory (default: $STATE_DIRECTORY or the user's data directory).")
    var state: String?

    @Option(name: .long, help: "A configuration file of 'key = value' lines.")
    var config: String?

    @Flag(name: .long, help: "Run as the system service (access policy, system paths), whatever the uid.")
    var system = false

    @Flag(name: .long, help: "Run as a user's service (serves only this user and root), even as root.")
    var user = false

    @Flag(
        name: .long, help: "Print the configuration keys (key, default, values, meaning) as a Markdown table and exit.")
    var configurationKeys = false

    func validate() throws {
        if system && user { throw ValidationError("--system and --user exclude each other") }
    }

    func run() async throws {
        if configurationKeys {
            print(ServerConfiguration.markdownTable)
            return
        }
        // Logging: structured journal entries (stderr lines without a journal) behind a bounded queue, at one
        // shared level that SetLogLevel changes at run time.
        let levels = LogLevelControl(.info)
        let queue = JournalQueue.writing(to: .automatic())
        LoggingSystem.bootstrap { label in JournalLogHandler(label: label, control: levels, queue: queue) }
        let logger = Logger(label: "smartstackd")
        // The last entries get at most `journalCloseLimit` (journald stalled or stopped blocks them): the stop
        // ends inside the units' TimeoutStopSec=15s whatever journald does.
        do {
            try await serve(levels: levels, queue: queue, logger: logger)
        } catch {
            _ = await queue.close(within: Self.journalCloseLimit)
            throw error
        }
        _ = await queue.close(within: Self.journalCloseLimit)
    }

    private func serve(levels: LogLevelControl, queue: JournalQueue, logger: Logger) async throws {
        let environment = Environment.all
        AllocatorTuning.apply(environment: environment)
        let configuration = try loadConfiguration(logger: logger)
        levels.level = configuration.logLevel
        queue.capacity = configuration.journalQueue
        if let descriptors = DescriptorLimit.raise(),
            descriptors < configuration.maxConnections + DescriptorLimit.besidesConnections
        {
            logger.warning(
                "the open-file limit is below maxConnections: connections past it wait unanswered; raise LimitNOFILE=",
                metadata: ["limit": "\(descriptors)", "maxConnections": "\(configuration.maxConnections)"])
        }
        let journal = ServiceJournal(queue: queue)
        journal.started(version: ServiceVersion.current)

        // Where to listen: the socket systemd passed, else --listen or the default path.
        let defaults = ServiceDefaults(
            environment: environment, uid: getuid(), system: system ? true : (user ? false : nil))
        let target = try listenTarget(defaults: defaults, logger: logger)
        let access = try accessControl(configuration, isSystem: defaults.isSystem)

        // Services: the listener; the watchdog when systemd wants one; test faults when asked; the status
        // reporter last, so that it hears of a graceful shutdown first (the group stops them in reverse).
        let started = ContinuousClock.now
        let listening = OneShotSignal()
        let ready = OneShotSignal()
        // State: the event log in the state directory; refused (naming the file) rather than replaced.
        let stateDirectory = state.map(Self.absolute) ?? defaults.stateDirectory
        let log: SQLiteEventLog
        do {
            log = try ServiceAssembly.openLog(
                stateDirectory: stateDirectory, options: configuration.store, logger: logger)
        } catch {
            logger.critical("cannot use the state database: \(error)")
            throw ExitCode(error.exitCode)
        }
        let service: ServiceAssembly
        do {
            service = try await ServiceAssembly.make(
                configuration: configuration, target: target, stateDirectory: stateDirectory,
                isSystem: defaults.isSystem, levels: levels, logger: logger, log: log, access: access,
                reporter: journal,
                announce: { target in
                    // For people running it by hand: under systemd standard output is the journal, which has the
                    // "listening" entry already (the banner's four lines were written at every activation).
                    if !JournalWriter.isJournalStream(STDOUT_FILENO) {
                        ServiceAssembly.printAddress(target)
                        print("state in \(stateDirectory)")
                        fflush(nil)
                    }
                    listening.fire()
                }, serveAfter: ready)
        } catch let failure as StoreFailure {
            logger.critical("cannot load the state database: \(failure)")
            throw ExitCode(65)  // EX_DATAERR
        }
        journal.stateLoaded(await service.host.snapshotStatistics(), in: ContinuousClock.now - started)

        let notifier = SystemdNotifier.fromEnvironment()
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: service.listener), .init(service: HostTimeService(host: service.host)),
        ]
        if let interval = notifier.watchdogPingInterval {
            services.append(
                .init(
                    service: WatchdogService(
                        notifier: notifier, interval: interval, host: service.host,
                        eventLoops: MultiThreadedEventLoopGroup.singleton, ready: ready, logger: logger)))
        }
        if FaultInjectionService.isEnabled(in: environment) {
            services.append(.init(service: FaultInjectionService(host: service.host, logger: logger)))
        }
        services.append(
            .init(
                service: StatusService(
                    notifier: notifier, host: service.host, connections: service.connections, journal: journal,
                    listening: listening, ready: ready, summaryInterval: .seconds(configuration.summaryInterval),
                    logger: logger)))
        let group = ServiceGroup(
            configuration: .init(
                services: services, gracefulShutdownSignals: [.sigterm, .sigint, .sighup], logger: logger))
        try await group.run()
        await service.host.closeLog()
        // Order changes still held by the coalescing window: every stack's last change reaches the journal.
        journal.flushAll()
        logger.info("stopped")
    }

    private func loadConfiguration(logger: Logger) throws -> ServerConfiguration {
        guard let config else { return ServerConfiguration() }
        do {
            return try ServerConfiguration.parse(try TextFile.read(config), source: config)
        } catch {
            logger.critical("configuration rejected: \(error)")
            throw ExitCode(78)  // EX_CONFIG
        }
    }

    /// The socket named `varlink` that systemd passed (socket activation), else `--listen` or the default.
    private func listenTarget(defaults: ServiceDefaults, logger: Logger) throws -> ListenTarget {
        let passed: ListenedSockets
        do {
            passed = try ListenedSockets.take()
        } catch {
            logger.error("cannot read the sockets systemd passed", metadata: ["error": "\(error)"])
            passed = ListenedSockets([])
        }
        if let target = ListenTarget.passed(passed.varlinkSockets.map(\.descriptor.rawValue)) {
            if listen != nil { logger.notice("--listen ignored: systemd passed the socket named varlink") }
            return target
        }
        if !passed.isEmpty {
            logger.warning(
                "systemd passed sockets but none named varlink; binding the socket path instead",
                metadata: ["names": "\(passed.sockets.map(\.name).joined(separator: ","))"])
        }
        return .path(listen.map(Self.absolute) ?? defaults.socketPath)
    }

    /// `path` against the working directory when it is relative (as a shell user means `--state state` or
    /// `--listen run/sock`), else as given.
    static func absolute(_ path: String) -> String {
        guard !path.isEmpty, !path.hasPrefix("/") else { return path }
        let directory: String? = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 4_096) { buffer in
            guard let base = buffer.baseAddress, getcwd(base, buffer.count) != nil else { return nil }
            return String(cString: base)
        }
        guard let directory else { return path }
        return (directory.hasSuffix("/") ? directory : directory + "/") + path
    }

    /// A user service serves its own user and root; the system service follows the configured policy.
    private func accessControl(_ configuration: ServerConfiguration, isSystem: Bool) throws -> AccessControl {
        guard isSystem else { return AccessControl(mode: .user(owner: getuid()), serviceUID: getuid()) }
        do {
            return AccessControl(
                mode: .system(try configuration.access.resolved(with: .system)), serviceUID: getuid(),
                maxAppsPerUID: configuration.maxAppsPerUID)
        } catch {
            Logger(label: "smartstackd").critical("access policy rejected: \(error)")
            throw ExitCode(78)
        }
    }
}
