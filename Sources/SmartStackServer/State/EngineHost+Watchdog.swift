public import SmartStackCore

#if canImport(Glibc)
    import Glibc
#endif

extension EngineHost {
    /// Answers from inside the owner's isolation: the watchdog's proof that the engine is not stuck.
    ///
    /// Returns the engine's time, so the call reads engine state like any other request would.
    public func heartbeat() -> Timestamp {
        engine.now
    }

    /// Test-only fault injection: blocks the owner's thread for `seconds`, as an engine stuck in a loop
    /// would, so nothing else reaches the engine and the watchdog pings stop.
    ///
    /// Reachable only through `FaultInjectionService`, which the daemon installs only when
    /// `SMARTSTACK_TEST_FAULTS=1` is in its environment (never in the shipped units).
    public func stallForTesting(seconds: Int) {
        logger.warning("test fault injection: stalling the engine", metadata: ["seconds": "\(seconds)"])
        var left = max(0, seconds)
        while left > 0 { left = Int(sleep(UInt32(left))) }
    }

    /// Per-donation detail, written only when the log level is debug or lower.
    func logDonation(_ donation: Donation) {
        logger.debug(
            "donation recorded",
            metadata: [
                "app": "\(donation.app.rawValue)", "intent": "\(donation.intent)", "donation": "\(donation.id)",
                "date": "\(donation.date.rfc3339)",
            ])
    }
}
