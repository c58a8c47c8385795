public import Logging
import ServiceLifecycle
import UnixSignals

/// Test-only fault injection, installed only when `SMARTSTACK_TEST_FAULTS=1` is in the environment: each
/// `SIGUSR2` stalls the engine's owner (``EngineHost/stallForTesting(seconds:)``) for an hour, so tests can
/// see the watchdog pings stop and systemd restart the service. The shipped units never set the variable.
public struct FaultInjectionService: NamedService {
    /// The environment variable that enables it.
    public static let environmentVariable = "SMARTSTACK_TEST_FAULTS"

    let host: EngineHost
    let logger: Logger

    public init(host: EngineHost, logger: Logger) {
        self.host = host
        self.logger = logger
    }

    /// Whether `environment` enables fault injection.
    public static func isEnabled(in environment: [String: String]) -> Bool {
        environment[environmentVariable] == "1"
    }

    public func run() async throws {
        logger.warning(
            "test fault injection is enabled: SIGUSR2 stalls the engine",
            metadata: [
                "variable": "\(Self.environmentVariable)"
            ])
        let signals = await UnixSignalsSequence(trapping: .sigusr2)
        for await _ in signals.cancelOnGracefulShutdown() {
            let host = self.host
            Task { await host.stallForTesting(seconds: 3_600) }
        }
    }
}
