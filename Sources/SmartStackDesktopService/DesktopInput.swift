public import SmartStackCore
public import SmartStackDesktop

/// What the D-Bus side hands the agent: the events of the session, and how the buses are doing.
public enum DesktopInput: Sendable {
    /// A unit of the watched manager became active.
    case unitStarted(UnitStart)
    /// logind signalled about a session: `Unlock`, or `LockedHint` changed.
    case session(SessionSignal, Timestamp, session: String)
    /// GNOME Shell's `OverviewActive` changed to this value (its overview opened or closed).
    case overview(Bool, Timestamp)
    /// Connected (again) to the buses and subscribed.
    case busConnected(String)
    /// A bus connection was lost; the watcher reconnects.
    case busLost(String)
    /// The bus cannot be reached (no connection yet, or none since one was lost): the watcher tries again after
    /// `retry` seconds, then less and less often. Sent when the reason is new, not at every attempt.
    case busUnavailable(String, retry: Double)
}

/// The system's real-time clock with the local UTC offset.
public enum WallClock {
    /// Now.
    public static func now() -> Timestamp {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return at(microseconds: Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1_000)
    }

    /// A realtime instant in microseconds, with the local UTC offset at that instant.
    public static func at(microseconds: Int64) -> Timestamp {
        var seconds = time_t(microseconds / 1_000_000)
        var local = tm()
        // `tzset` first: `localtime_r` alone keeps the zone it read first, after `timedatectl set-timezone` too.
        tzset()
        localtime_r(&seconds, &local)
        return Timestamp(microseconds: microseconds, utcOffsetSeconds: Int32(local.tm_gmtoff))
    }
}

#if canImport(Glibc)
    import Glibc
#endif
