public import Logging
public import NIOCore
import ServiceLifecycle
public import SmartStackSystemd

/// Sends `WATCHDOG=1` every `interval` (half of `WatchdogSec=`), each time only after a round trip through
/// the engine's owner (`EngineHost.heartbeat()`) and every event loop: a stalled engine or a blocked event
/// loop stops the pings, and systemd kills and restarts the service.
public struct WatchdogService: NamedService {
    let notifier: SystemdNotifier
    let interval: Duration
    let host: EngineHost
    let eventLoops: any EventLoopGroup
    let ready: OneShotSignal
    let logger: Logger

    public init(
        notifier: SystemdNotifier, interval: Duration, host: EngineHost, eventLoops: any EventLoopGroup,
        ready: OneShotSignal, logger: Logger
    ) {
        self.notifier = notifier
        self.interval = interval
        self.host = host
        self.eventLoops = eventLoops
        self.ready = ready
        self.logger = logger
    }

    public func run() async throws {
        // systemd arms the watchdog at READY=1 (`ready` fires once it was sent); nothing to prove before that.
        await cancelWhenGracefulShutdown { await ready.wait() }
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            _ = await host.heartbeat()
            for loop in eventLoops.makeIterator() { try await loop.submit {}.get() }
            do {
                try notifier.watchdog()
            } catch {
                logger.warning("sd_notify failed", metadata: ["notification": "WATCHDOG=1", "error": "\(error)"])
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }
}
