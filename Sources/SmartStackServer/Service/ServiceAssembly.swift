public import Logging
import NIOPosix
import ServiceLifecycle
import SmartStackCore
public import SmartStackStore

#if canImport(Glibc)
    import Glibc
#endif

/// The service's parts wired together: the engine's owner, the dispatcher and the listener.
///
/// `smartstackd`'s main and the tests build the service the same way, through `make`.
public struct ServiceAssembly: Sendable {
    public let host: EngineHost
    public let connections: ConnectionRegistry
    public let dispatcher: ServiceDispatcher
    public let listener: VarlinkListener

    /// Builds the service; fails (before anything listens) when the state directory can't be used.
    public static func make(
        configuration: ServerConfiguration, target: ListenTarget, stateDirectory: String, isSystem: Bool,
        levels: LogLevelControl, logger: Logger, clock: (any ServiceClock)? = nil,
        log: any EventLog = InMemoryEventLog(),
        access: AccessControl = .unrestricted, reporter: any ServiceReporter = SilentReporter(),
        announce: @escaping @Sendable (ListenTarget) -> Void = ServiceAssembly.printAddress,
        serveAfter ready: OneShotSignal? = nil
    ) async throws -> ServiceAssembly {
        try StateDirectory.prepare(stateDirectory)
        // One loop serves every connection and runs the engine: calls never wait for another thread.
        let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
        _ = try await eventLoop.submit { LoopPriority.requestShortSlice(logger: logger) }.get()
        let clock =
            clock ?? SystemServiceClock(stepConfirmation: Double(configuration.clockStepConfirmationSeconds))
        let host = EngineHost(
            settings: configuration.engine, limits: configuration.host, clock: clock, log: log, logger: logger,
            reporter: reporter, eventLoop: eventLoop)
        let restored = try await host.restore()
        // Apps claimed by their first uid keep their owner across restarts.
        access.restoreClaims(restored.owners)
        access.recordClaims(
            { app, uid in log.recordOwner(app: app, uid: uid) },
            release: { app, uid in log.releaseOwner(app: app, uid: uid) })
        // A rollback after a failed commit re-reads the stored claims too.
        await host.perform { host in host.ownersRestored = { owners in access.resetClaims(to: owners) } }
        // The per-uid shares of the global limits, in system mode: by each app's claiming uid.
        if access.isSystemMode {
            let serviceUID = access.serviceUID
            await host.perform { host in
                host.quotaOwner = { app in
                    guard let uid = access.owner(of: app), uid != 0, uid != serviceUID else { return nil }
                    return uid
                }
                host.recountOwnerShares()
            }
        }
        // Root and the service's own uid are trusted (they may do everything): not counted per uid.
        let connections = ConnectionRegistry(
            limit: configuration.maxConnections, perUIDLimit: configuration.maxConnectionsPerUID,
            pendingPerUIDLimit: configuration.maxPendingConnectionsPerUID, exempt: [0, getuid()],
            inputBudget: configuration.maxInputBytes)
        let dispatcher = ServiceDispatcher(
            host: host, connections: connections, levels: levels, maxListLimit: configuration.host.maxListLimit,
            logger: logger, access: access, reporter: reporter,
            rateLimiter: RateLimiter(
                rate: Double(configuration.rateLimitPerApp), perUID: Double(configuration.rateLimitPerUID),
                burst: Double(configuration.rateLimitBurst)))
        let listener = VarlinkListener(
            target: target, handler: dispatcher, connections: connections, maxFrameSize: configuration.maxFrameSize,
            stopGrace: .seconds(Int64(configuration.stopGraceSeconds)),
            socketMode: isSystem ? 0o666 : 0o600, directoryMode: isSystem ? 0o755 : 0o700, logger: logger,
            eventLoop: eventLoop,
            onListening: {
                announce(target)
                // Under systemd, a socket it passed is accepted from only once READY=1 was sent: the first reply a
                // client gets then comes from an active service (calls are answered as soon as they are read).
                if let ready { await cancelWhenGracefulShutdown { await ready.wait() } }
            }, onShutdown: { await host.stop() }, reporter: reporter)
        return ServiceAssembly(host: host, connections: connections, dispatcher: dispatcher, listener: listener)
    }

    /// Opens the event log in the state directory (creating both when missing); the error names the database file.
    public static func openLog(stateDirectory: String, options: StoreOptions, logger: Logger) throws(StoreOpenError)
        -> SQLiteEventLog
    {
        do {
            try StateDirectory.prepare(stateDirectory)
        } catch {
            throw StoreOpenError(
                .notWritable, path: stateDirectory + "/" + SQLiteEventLog.fileName, reason: error.description)
        }
        return try SQLiteEventLog.open(directory: stateDirectory, options: options, logger: logger)
    }

    /// Prints where the service listens and how to talk to it (standard output, for people running it by hand).
    @Sendable public static func printAddress(_ target: ListenTarget) {
        let address = target.description.split(separator: " ").first.map(String.init) ?? target.description
        print("smartstackd is listening on \(address)")
        // Name the command line beside this binary when it is not on PATH (as after `make run`).
        let executable = CommandLine.arguments.first ?? "smartstackd"
        let directory =
            executable.contains("/")
            ? String(executable[...(executable.lastIndex(of: "/") ?? executable.startIndex)]) : ""
        print("try:  \(directory)smartstackctl --address \(address) status")
        print("      python3 -m varlink.cli call \(address)/org.varlink.service.GetInfo")
        fflush(nil)
    }
}
