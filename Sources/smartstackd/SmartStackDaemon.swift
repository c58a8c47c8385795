// smartstackd — ranks the widgets of every Smart Stack and serves the answer over Varlink.
//
// Interfaces served on one Unix socket:
//   io.smartstack.Provider  apps: register widget kinds, donate intents, push timelines, watch reloads
//   io.smartstack.Shell     shells: configure stacks, get and subscribe to orders, report engagement
//   io.smartstack.Admin     statistics and the log level
//   org.varlink.service     introspection
//
// run(): arguments → logging → configuration → services → run until SIGTERM/SIGINT.

import ArgumentParser
import Logging
import ServiceLifecycle
import SmartStackProtocol
import SmartStackServer
import SmartStackStore

#if canImport(Glibc)
    import Glibc
#endif

@main
struct SmartStackDaemon: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "smartstackd",
        abstract: "Ranks the widgets of every Smart Stack and serves them over Varlink on a Unix socket.")

    @Option(name: .long, help: "The Unix socket to listen on (default: the user's or the system's path).")
    var listen: String?

    @Option(name: .long, help: "The state directory (default: $STATE_DIRECTORY or the user's data directory).")
    var state: String?

    @Option(name: .long, help: "A configuration file of 'key = value' lines.")
    var config: String?

    func run() async throws {
        // Logging: one shared level that SetLogLevel changes at run time.
        let levels = LogLevelControl(.info)
        LoggingSystem.bootstrap { label in StderrLogHandler(label: label, control: levels) }
        let logger = Logger(label: "smartstackd")

        // Configuration.
        var settings = ServerConfiguration()
        if let config {
            do {
                settings = try ServerConfiguration.parse(try TextFile.read(config), source: config)
            } catch {
                logger.critical("configuration rejected: \(error)")
                throw ExitCode(78)  // EX_CONFIG
            }
        }
        levels.level = settings.logLevel
        let defaults = ServiceDefaults(environment: Environment.all, uid: getuid())
        let stateDirectory = state ?? defaults.stateDirectory
        let target = ListenTarget.path(listen ?? defaults.socketPath)

        // State: the event log in the state directory; refused (naming the file) rather than replaced.
        let log: SQLiteEventLog
        do {
            log = try ServiceAssembly.openLog(stateDirectory: stateDirectory, options: settings.store, logger: logger)
        } catch {
            logger.critical("cannot use the state database: \(error)")
            throw ExitCode(error.exitCode)
        }

        // Services.
        let service: ServiceAssembly
        do {
            service = try await ServiceAssembly.make(
                configuration: settings, target: target, stateDirectory: stateDirectory, isSystem: defaults.isSystem,
                levels: levels, logger: logger, log: log)
        } catch let failure as StoreFailure {
            logger.critical("cannot load the state database: \(failure)")
            throw ExitCode(65)  // EX_DATAERR
        }
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: service.listener)], gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        try await group.run()
        await service.host.closeLog()
        logger.info("stopped")
    }
}
